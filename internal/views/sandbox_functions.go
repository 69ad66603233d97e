package views

import (
	_ "embed"
	"fmt"
	"strings"
)

// The classification of DuckDB's functions for a session's statements:
// every function of DuckDB's catalog (duckdb_functions()) is either
// allowed (sandbox_functions_allowed.txt, one name a line) or refused
// (refusedFunctions, with the reason). A statement that calls a refused
// function, or one this list does not know, is refused by name before it
// runs (checkStatement). TestFunctionsClassified walks the catalog and
// fails on any function missing here, so a DuckDB upgrade that adds one
// fails a test until it is classified.

//go:embed sandbox_functions_allowed.txt
var allowedText string

// allowedFunctions are the functions a statement may call: they read and
// compute, and change nothing (the sandbox's settings bound the files
// they may read).
var allowedFunctions = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(allowedText, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			m[l] = true
		}
	}
	return m
}()

const (
	whyPragma   = "a PRAGMA (statements other than SELECT are refused)"
	whySetting  = "changes a setting of the session"
	whyWrites   = "writes to the database or its files"
	whyIndirect = "runs SQL text the read-only check does not see"
	whyInternal = "an internal or test function that reads memory or state directly"
	whyStall    = "holds a query slot without work"
)

// refusedFunctions are the functions a statement may not call, by name,
// with the reason.
var refusedFunctions = map[string]string{
	// Write or change settings, logging, profiling, the parser, checkpoints.
	"add_parquet_key": whySetting, "checkpoint": whyWrites, "force_checkpoint": whyWrites,
	"enable_logging": whySetting, "disable_logging": whySetting, "truncate_duckdb_logs": whyWrites,
	"write_log": whyWrites, "enable_profiling": whySetting, "disable_profiling": whySetting,
	"enable_peg_parser": whySetting, "disable_peg_parser": whySetting, "check_peg_parser": whyInternal,
	"setseed": whySetting, "nextval": whyWrites, "copy_database": whyWrites, "import_database": whyWrites,
	// Run SQL text past the check, or open another database.
	"query": whyIndirect, "json_execute_serialized_sql": whyIndirect, "json_serialize_plan": whyIndirect,
	"read_duckdb": "opens a database file (an ATTACH)",
	// Read memory or internal state.
	"arrow_scan": whyInternal, "arrow_scan_dumb": whyInternal, "seq_scan": whyInternal,
	// Sleep.
	"sleep_ms": whyStall, "pg_sleep": whyStall,
	// PRAGMA-only functions (a SELECT cannot call them; listed so that
	// every function is classified).
	"all_profiling_output": whyPragma, "collations": whyPragma, "database_list": whyPragma,
	"database_size": whyPragma, "disable_checkpoint_on_shutdown": whyPragma, "disable_object_cache": whyPragma,
	"disable_optimizer": whyPragma, "disable_print_progress_bar": whyPragma, "disable_profile": whyPragma,
	"disable_progress_bar": whyPragma, "disable_verification": whyPragma, "disable_verify_external": whyPragma,
	"disable_verify_fetch_row": whyPragma, "disable_verify_parallelism": whyPragma, "disable_verify_serializer": whyPragma,
	"enable_checkpoint_on_shutdown": whyPragma, "enable_object_cache": whyPragma, "enable_optimizer": whyPragma,
	"enable_print_progress_bar": whyPragma, "enable_profile": whyPragma, "enable_progress_bar": whyPragma,
	"enable_verification": whyPragma, "extension_versions": whyPragma, "functions": whyPragma,
	"metadata_info": whyPragma, "platform": whyPragma, "show": whyPragma, "show_databases": whyPragma,
	"show_tables": whyPragma, "show_tables_expanded": whyPragma, "storage_info": whyPragma,
	"table_info": whyPragma, "user_agent": whyPragma, "verify_external": whyPragma,
	"verify_fetch_row": whyPragma, "verify_parallelism": whyPragma, "verify_serializer": whyPragma,
}

// checkFunction refuses a function a statement may not call: a refused
// one, with its reason, or one the classification does not know.
func checkFunction(name string) error {
	n := strings.ToLower(name)
	if why, ok := refusedFunctions[n]; ok {
		return fmt.Errorf("%w: function %s is refused: %s", ErrNotReadOnly, n, why)
	}
	if !allowedFunctions[n] {
		return fmt.Errorf("%w: function %s is not one the query sandbox allows", ErrNotReadOnly, n)
	}
	return nil
}

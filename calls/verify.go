package calls

// VerifySnapshotInput verifies the tables of a snapshot of Source
// ("current" or "" for the current one) against the live source; Tables
// names schema.table (none: every table).
type VerifySnapshotInput struct {
	Source   string
	Snapshot string
	Tables   []string `json:",omitempty"`
}

// TableVerdict is one table's verdict (verify.Verdict), or Error when it
// could not be verified.
type TableVerdict struct {
	Table   string `json:"table"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Error   string `json:"error,omitempty"`
}

// VerifySnapshotResult is every table's verdict with their counts.
type VerifySnapshotResult struct {
	SnapshotID   string         `json:"snapshot_id"`
	Tables       []TableVerdict `json:"tables"`
	Match        int            `json:"match"`
	Mismatch     int            `json:"mismatch"`
	Inconclusive int            `json:"inconclusive"`
	Errors       int            `json:"errors"`
}

package schema

import "testing"

func TestColumnCollations(t *testing.T) {
	got, err := ColumnCollations("CREATE TABLE t (a VARCHAR(5), b VARCHAR(5) COLLATE utf8mb4_bin, " +
		"c VARCHAR(5) CHARACTER SET latin1, d INT, e TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_as_ci, " +
		"u UUID, i6 INET6, f VARCHAR(3) CHARACTER SET latin1 COLLATE latin1_bin) " +
		"ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "utf8mb4_unicode_ci", "b": "utf8mb4_bin", "d": "utf8mb4_unicode_ci", "e": "utf8mb4_0900_as_ci", "f": "latin1_bin"}
	for col, co := range want {
		if got[col] != co {
			t.Errorf("column %s: %q, want %q", col, got[col], co)
		}
	}
	if _, ok := got["c"]; ok {
		t.Errorf("column c (its own charset, its default collation): %q", got["c"])
	}
	for co, ci := range map[string]bool{"": true, "utf8mb4_general_ci": true, "utf8mb4_bin": false, "latin1_general_cs": false, "binary": false} {
		if CaseInsensitive(co) != ci {
			t.Errorf("CaseInsensitive(%q) != %v", co, ci)
		}
	}
	if AccentInsensitive("utf8mb4_0900_as_ci") || !AccentInsensitive("utf8mb4_0900_ai_ci") {
		t.Error("AccentInsensitive")
	}
	if _, err := ColumnCollations("CREATE VIEW v AS SELECT 1"); err == nil {
		t.Error("a view: no error")
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/jobs"
)

// TestRestoreTarget: a restore's target is a valid job name that tells
// targets apart: the server and the schema restored into.
func TestRestoreTarget(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range []struct {
		addr string
		sp   activities.RestoreSpec
		want string
	}{
		{"127.0.0.1:3306", activities.RestoreSpec{IntoSchema: "shop_restored"}, "127.0.0.1-3306.shop_restored"},
		{"127.0.0.1:3306", activities.RestoreSpec{Schemas: []string{"shop", "crm"}}, "127.0.0.1-3306.shop.crm"},
		{"127.0.0.1:3306", activities.RestoreSpec{}, "127.0.0.1-3306.all"},
		{"db-1.example:3307", activities.RestoreSpec{IntoSchema: "{schema}_old"}, "db-1.example-3307.-schema-_old"},
		{"127.0.0.1:3306", activities.RestoreSpec{IntoSchema: strings.Repeat("x", 80)}, ""},
	} {
		got := restoreTarget(c.addr, c.sp)
		if err := jobs.CheckName("target", got); err != nil {
			t.Errorf("%s %+v: %v", c.addr, c.sp, err)
		}
		if c.want != "" && got != c.want {
			t.Errorf("%s %+v: %q, want %q", c.addr, c.sp, got, c.want)
		}
		if seen[got] {
			t.Errorf("%q names two targets", got)
		}
		seen[got] = true
	}
}

package moment

import (
	"strconv"
	"strings"

	"github.com/dbtrail/dbtrail/internal/change"
)

// gtidSetMax returns the greatest sequence number set holds for domain (as
// change.GTIDKey names domains). MariaDB sets list one GTID per domain and
// server ("0-1-100,1-2-7"); MySQL sets list intervals per uuid
// ("uuid:1-5:7-9,uuid2:1-3"). known is false when the domain is absent.
func gtidSetMax(set, domain string) (hi uint64, known bool) {
	for _, part := range strings.Split(set, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, ":") {
			if d, n, err := change.GTIDKey(part); err == nil && d == domain {
				hi, known = max(hi, n), true
			}
			continue
		}
		fields := strings.Split(part, ":")
		uuid := strings.ToLower(fields[0])
		tag := ""
		for _, f := range fields[1:] {
			lo, up, isRange := strings.Cut(f, "-")
			if _, err := strconv.ParseUint(lo, 10, 64); err != nil {
				tag = ":" + strings.ToLower(f) // a MySQL 8.4 tag
				continue
			}
			if uuid+tag != domain {
				continue
			}
			end := lo
			if isRange {
				end = up
			}
			if n, err := strconv.ParseUint(end, 10, 64); err == nil {
				hi, known = max(hi, n), true
			}
		}
	}
	return hi, known
}

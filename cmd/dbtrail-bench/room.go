package main

import (
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/room"
)

// The target of every room row: a step writes between 0.4 and 1 times its
// estimate (never more, rarely far less).
const (
	roomLowest, roomHighest = 0.4, 1.0
	roomTarget              = "0.4–1.0"
)

// roomVerdict says whether ratios lo to hi of written ÷ estimate are all
// within the target.
func roomVerdict(lo, hi float64) string {
	if lo >= roomLowest && hi <= roomHighest {
		return "within target"
	}
	return "NOT within target"
}

// roomRows reports, per step kind (pair, rewrite), the least and greatest
// actual ÷ estimate of the runs whose estimate is above room.Floor (a
// floored estimate says nothing of the rule), against the target.
func roomRows(runs iter.Seq[refreshRun]) []result {
	type span struct {
		lo, hi float64
		n      int
	}
	kinds := map[string]*span{}
	for r := range runs {
		if r.room == nil || r.room.Estimate <= room.Floor {
			continue
		}
		x := room.Ratio(r.room.Written, r.room.Estimate)
		sp := kinds[r.room.Kind]
		if sp == nil {
			sp = &span{lo: x, hi: x}
			kinds[r.room.Kind] = sp
		}
		sp.lo, sp.hi, sp.n = min(sp.lo, x), max(sp.hi, x), sp.n+1
	}
	var out []result
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		sp := kinds[k]
		out = append(out, result{"room: " + k + " written ÷ estimate", fmt.Sprintf("%.2f–%.2f", sp.lo, sp.hi), roomTarget,
			fmt.Sprintf("%s; %d runs above the %s floor", roomVerdict(sp.lo, sp.hi), sp.n, disk.Bytes(room.Floor))})
	}
	return out
}

package foldplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// gapRefusal is every table's reason when the window crossed a capture gap
// (the plan's Reasons name the gaps).
const gapRefusal = "the window crossed a capture gap: take a full backup"

// planTable decides for one table of the previous snapshot. Order: refusal
// (capture gap, shape), then rewrites that hold for every table (not local) or for a
// malformed chain, then link when nothing changed, then the rewrites of a
// changed table (full only, no chain, deltas off, age, size), else a pair.
func planTable(in Input, mt snapshot.ManifestTable, l schemahist.Lineage, vers windowVersions, global, gaps []string) TablePlan {
	k := TableKey{mt.Schema, mt.Table}
	tp := TablePlan{Key: k, Changes: in.Changes[k], DefinitionMoved: len(l.Steps) > 0}
	cr, waiting := in.Compacted[k]
	foot := in.Footers[k]
	cur := in.Current[k]
	why := refusal(nil, vers.all, foot.Table, cur)
	if len(gaps) > 0 {
		why = strings.TrimSuffix(gapRefusal+"; "+why, "; ")
	}
	if why != "" {
		tp.Action, tp.Reason = ActionRefuse, "refused: "+why
		if waiting {
			tp.CompactNote = fmt.Sprintf("compacted range %s in .compact/ ignored: the table is refused", Entry(cr.From, cr.To))
			tp.DropCompacted = true
		}
		return tp
	}
	full := snapshot.FullOnly(cur)
	rewrite := slices.Clone(global)
	es, err := parseChain(mt)
	if err != nil {
		rewrite = append(rewrite, "the previous chain is malformed: "+err.Error())
	} else if waiting {
		if sub, err := matchCompacted(cr, mt, es, in.Prev.Files); err != nil {
			tp.CompactNote = "compacted range in .compact/ ignored: " + err.Error()
			tp.DropCompacted = true
		} else {
			tp.CompactNote = fmt.Sprintf("compacted range %s from .compact/ replaces %d chain entries",
				Entry(cr.From, cr.To), len(es)-len(sub)+1)
			es, tp.UseCompacted, tp.DropCompacted = sub, &cr, true
		}
	}
	links, chainBytes, missing := linksOf(mt, es, in.Prev.Files, tp.UseCompacted)
	if missing != "" && err == nil {
		rewrite = append(rewrite, "the previous manifest has no digest for "+missing)
	}
	if len(rewrite) == 0 && tp.Changes != 0 {
		rewrite = changedRewrites(in, mt, full, chainBytes, links[0].Digest.Size, foot.SnapshotID)
	}
	if len(rewrite) > 0 {
		tp.Action, tp.Reason, tp.Kind = ActionRewrite, "rewrite: "+strings.Join(rewrite, "; "), snapshot.KindDelta
		if tp.DefinitionMoved {
			tp.Reason += "; its definition moved (" + l.Describe() + ")"
		}
		if full {
			tp.Kind = snapshot.KindFull
		}
		if tp.UseCompacted != nil {
			tp.UseCompacted = nil
			tp.CompactNote = fmt.Sprintf("compacted range %s in .compact/ ignored: the table is rewritten in full", Entry(cr.From, cr.To))
			tp.DropCompacted = true
		}
		return tp
	}
	tp.Links = links
	for _, l := range links[1:] {
		tp.Chain = append(tp.Chain, l.Dst)
	}
	n := len(es)
	if tp.Changes == 0 {
		tp.Action, tp.Kind = ActionLink, mt.Kind
		tp.Reason = "link: no changes in the window: the table file is linked forward"
		if n > 0 {
			tp.Reason = fmt.Sprintf("link: no changes in the window: the table file and %d chain entries are linked forward", n)
		}
	} else {
		tp.Action, tp.Kind, tp.Next = ActionPair, snapshot.KindDelta, es[n-1].to+1
		start, _ := snapshot.ParseSnapshotID(foot.SnapshotID)
		tp.Reason = fmt.Sprintf("pair: %d rows changed: new pair %s after %d chain entries (chain %s, table file %s, chain started %s ago)",
			tp.Changes, Entry(tp.Next, tp.Next), n, HumanBytes(chainBytes), HumanBytes(links[0].Digest.Size),
			in.Now.Sub(start).Round(time.Second))
		n++
	}
	if tp.DefinitionMoved {
		tp.Reason += "; its definition moved (" + l.Describe() + ")"
	}
	if n >= CompactAt {
		tp.NeedsCompaction = true
		tp.Reason += fmt.Sprintf("; the chain lists %d entries (a compaction follows at %d)", n, CompactAt)
	}
	return tp
}

// linksOf lists the files a link or pair hard-links: the table file, then
// every chain entry's posdel and upserts (the range pair from .compact/ when
// cr is used). It returns the chain's total size and the first file the
// manifest has no digest for.
func linksOf(mt snapshot.ManifestTable, es []entry, files map[string]digest.Digest, cr *CompactedRange) ([]Link, int64, string) {
	var missing string
	var size int64
	add := func(links []Link, path string) []Link {
		d, ok := files[path]
		if !ok && missing == "" {
			missing = path
		}
		return append(links, Link{Dst: path, Src: path, Digest: d})
	}
	links := add(nil, mt.File)
	for i, e := range es {
		if i == 0 && cr != nil {
			links = append(links, Link{Dst: e.posdel, Src: cr.Posdel, FromCompact: true, Digest: cr.PosdelDigest},
				Link{Dst: e.upserts, Src: cr.Upserts, FromCompact: true, Digest: cr.UpsertsDigest})
		} else {
			links = add(add(links, e.posdel), e.upserts)
		}
		size += links[len(links)-2].Digest.Size + links[len(links)-1].Digest.Size
	}
	return links, size, missing
}

// changedRewrites are the reasons a changed table is rewritten instead of
// given a pair.
func changedRewrites(in Input, mt snapshot.ManifestTable, full bool, chainBytes, tableBytes int64, startID string) []string {
	var why []string
	if full {
		why = append(why, "the table is always written in full: "+snapshot.FullOnlyReason(in.Current[TableKey{mt.Schema, mt.Table}]))
	} else if mt.Kind == snapshot.KindFull {
		why = append(why, "the previous snapshot has no chain for it (kind full)")
	}
	if !in.TableDeltas {
		why = append(why, "table deltas are turned off")
	}
	if mt.Kind != snapshot.KindDelta || full {
		return why
	}
	maxAge := in.MaxChainAge
	if maxAge <= 0 {
		maxAge = DefaultMaxChainAge
	}
	if start, err := snapshot.ParseSnapshotID(startID); err != nil {
		why = append(why, fmt.Sprintf("the chain's start is unknown: the table file's footer has snapshot id %q", startID))
	} else if age := in.Now.Sub(start); age >= maxAge {
		why = append(why, fmt.Sprintf("the chain is %s old (started with snapshot %s), at least %s",
			age.Round(time.Second), startID, maxAge))
	}
	// More than a quarter: 4*chain > table, which for integers is chain > table/4.
	if chainBytes > MinChainBytes && chainBytes > tableBytes/4 {
		why = append(why, fmt.Sprintf("the chain is %s, more than a quarter of the %s table file",
			HumanBytes(chainBytes), HumanBytes(tableBytes)))
	}
	return why
}

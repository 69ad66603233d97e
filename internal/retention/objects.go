package retention

import "time"

// Content objects. A remote snapshot's files are stored once by their
// content (internal/remote: <source>/objects/<sha256[:2]>/<sha256>) and its
// manifest refers to them, so one object serves every snapshot that holds
// the same file. Removing a snapshot removes its manifest; the objects it
// referred to go by the rule below, computed from the manifests left: the
// reference count of an object is the number of remote manifests listing
// its digest.
//
// ObjectGrace is the age under which an object is never removed, referred
// to or not: an upload puts (or finds) its objects before its manifest, and
// the upload relies on an object it did not just write only while it is
// younger than ObjectGrace/2 (remote.Mirror.Upload touches an older one
// that no manifest it read refers to). A removal therefore never takes an
// object a manifest in flight refers to, as long as an upload and a sweep
// together last less than ObjectGrace/2.
const ObjectGrace = 24 * time.Hour

// Object is one content object on the store.
type Object struct {
	Name     string
	SHA256   string
	Modified time.Time // when it was last written or touched (the store's time)
}

// Unreferenced returns the objects retention removes: those whose SHA256
// no kept manifest lists (refs) and that were modified at least grace
// before now. An object without a known modification time is kept.
func Unreferenced(objects []Object, refs map[string]bool, now time.Time, grace time.Duration) []Object {
	var out []Object
	for _, o := range objects {
		if refs[o.SHA256] || o.Modified.IsZero() || now.Sub(o.Modified) < grace {
			continue
		}
		out = append(out, o)
	}
	return out
}

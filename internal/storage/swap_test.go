package storage

import (
	"errors"
	"io/fs"
	"testing"
)

// TestSwapDue: a swap is due when the pointer holds old (a missing one
// reads ""), done when it holds next, refused naming what it holds
// otherwise; a read error other than a missing pointer is returned.
func TestSwapDue(t *testing.T) {
	boom := errors.New("read failed")
	for _, c := range []struct {
		cur, old, next string
		readErr        error
		due            bool
		moved          string // Got of the *PointerMovedError; "-": none
		err            error
	}{
		{"a", "a", "b", nil, true, "-", nil},
		{"", "", "b", fs.ErrNotExist, true, "-", nil},
		{"b", "a", "b", nil, false, "-", nil},
		{"c", "a", "b", nil, false, "c", nil},
		{"", "a", "b", fs.ErrNotExist, false, "", nil},
		{"", "a", "b", boom, false, "-", boom},
	} {
		due, err := swapDue("p", c.cur, c.old, c.next, c.readErr)
		var pm *PointerMovedError
		moved := "-"
		if errors.As(err, &pm) {
			moved = pm.Got
		} else if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("%+v: error %v", c, err)
		}
		if due != c.due || moved != c.moved {
			t.Errorf("%+v: due %v moved %q", c, due, moved)
		}
	}
}

package schema

// TEMPORARY (lead's placeholder until the reshape branch lands): only
// metadata-only changes are proven.

import "fmt"

type Reshape struct {
	Columns []ColumnSource `json:"columns"`
}

type ColumnSource struct {
	Name  string  `json:"name"`
	From  string  `json:"from,omitempty"`
	Value *string `json:"value,omitempty"`
}

type RedumpError struct{ Table, Stmt, Reason string }

func (e *RedumpError) Error() string { return fmt.Sprintf("%s: %s", e.Table, e.Reason) }

func PlanReshape(old, new *Table, stmt string) (Reshape, error) {
	var r Reshape
	for _, c := range new.Columns {
		if old.ColumnIndex(c.Name) < 0 {
			if c.Nullable {
				r.Columns = append(r.Columns, ColumnSource{Name: c.Name})
				continue
			}
			return Reshape{}, &RedumpError{Table: new.QualifiedName(), Stmt: stmt, Reason: "column " + c.Name + " added"}
		}
		r.Columns = append(r.Columns, ColumnSource{Name: c.Name, From: c.Name})
	}
	return r, nil
}

func (r Reshape) SameRows() bool { return false }

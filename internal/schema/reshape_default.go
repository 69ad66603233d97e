package schema

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// litKind is the kind of a constant default.
type litKind int

const (
	litNull    litKind = iota
	litNumber          // an integer or decimal literal: text holds its digits
	litFloat           // a literal with an exponent: f holds its value
	litString          // a string literal: text holds its bytes
	litBits            // b'0101' or x'ff': text holds its bytes
	litNegZero         // a negative zero, whose stored form this code does not know
)

// literal is a constant default value as the statement spells it.
type literal struct {
	kind litKind
	neg  bool   // litNumber, litFloat: a minus sign
	text string // litNumber: digits with an optional fraction ("12.50"); litString, litBits: bytes
	f    float64
}

// addedValue returns the value every existing row gets in the added column
// n, defined by def: nil for NULL, else its text as a table file stores it.
func (pl *planner) addedValue(def *ast.ColumnDef, n Column) (*string, error) {
	var dflt ast.ExprNode
	explicitNull := false
	for _, o := range def.Options {
		switch o.Tp {
		case ast.ColumnOptionAutoIncrement:
			return nil, pl.redump("column %s is a new AUTO_INCREMENT column: the server numbers the existing rows", n.Name)
		case ast.ColumnOptionDefaultValue:
			dflt = o.Expr
		case ast.ColumnOptionNull:
			explicitNull = true
		}
	}
	if pl.cutExprs {
		return nil, pl.redump("column %s: the statement's expressions cannot be parsed, so its default is unknown", n.Name)
	}
	if dflt == nil {
		switch {
		case n.Type == "timestamp" && !explicitNull:
			return nil, pl.redump("column %s: a TIMESTAMP column's implicit default depends on explicit_defaults_for_timestamp", n.Name)
		case n.Nullable:
			return nil, nil
		}
		v, ok := implicitDefault(n)
		if !ok {
			return nil, pl.redump("column %s: NOT NULL %s without a DEFAULT: the value existing rows get is not known", n.Name, typeText(n))
		}
		return &v, nil
	}
	lit, ok := literalOf(dflt)
	if !ok {
		return nil, pl.redump("column %s: DEFAULT %s is not a constant", n.Name, exprText(dflt))
	}
	if lit.kind == litNull {
		if !n.Nullable {
			return nil, pl.redump("column %s: DEFAULT NULL on a NOT NULL column", n.Name)
		}
		return nil, nil
	}
	if lit.kind == litString && pl.backslash {
		return nil, pl.redump("column %s: a string literal holds a backslash, whose meaning depends on NO_BACKSLASH_ESCAPES", n.Name)
	}
	if tp := def.Tp; (n.Type == "float" || n.Type == "double") && tp.GetDecimal() > 0 && tp.GetDecimal() < 31 {
		return nil, pl.redump("column %s: %s(M,D) rounds its default", n.Name, n.Type)
	}
	v, ok := storedForm(n, lit)
	if !ok {
		return nil, pl.redump("column %s: the stored form of DEFAULT %s in %s is not known", n.Name, exprText(dflt), typeText(n))
	}
	return &v, nil
}

// literalOf reads a constant default: a literal, with a sign for numbers.
func literalOf(e ast.ExprNode) (literal, bool) {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return literalOf(x.Expr)
	case *ast.UnaryOperationExpr:
		if x.Op != opcode.Minus && x.Op != opcode.Plus {
			return literal{}, false
		}
		l, ok := literalOf(x.V)
		if !ok || (l.kind != litNumber && l.kind != litFloat) {
			return literal{}, false
		}
		if x.Op == opcode.Minus {
			l.neg = !l.neg
		}
		if l.neg && (l.kind == litNumber && strings.Trim(l.text, "0.") == "" || l.kind == litFloat && l.f == 0) {
			l.kind = litNegZero
		}
		return l, true
	case *test_driver.ValueExpr:
		switch x.Kind() {
		case test_driver.KindNull:
			return literal{kind: litNull}, true
		case test_driver.KindInt64:
			v := x.GetInt64()
			if v < 0 {
				return literal{kind: litNumber, neg: true, text: strconv.FormatUint(uint64(-(v+1))+1, 10)}, true
			}
			return literal{kind: litNumber, text: strconv.FormatInt(v, 10)}, true
		case test_driver.KindUint64:
			return literal{kind: litNumber, text: strconv.FormatUint(x.GetUint64(), 10)}, true
		case test_driver.KindMysqlDecimal:
			s := x.GetMysqlDecimal().String()
			neg := strings.HasPrefix(s, "-")
			return literal{kind: litNumber, neg: neg, text: strings.TrimPrefix(s, "-")}, true
		case test_driver.KindFloat32, test_driver.KindFloat64:
			f := x.GetFloat64()
			return literal{kind: litFloat, neg: f < 0, f: math.Abs(f)}, true
		case test_driver.KindString, test_driver.KindBytes:
			return literal{kind: litString, text: x.GetString()}, true
		case test_driver.KindBinaryLiteral:
			return literal{kind: litBits, text: string(x.GetBytes())}, true
		}
	}
	return literal{}, false
}

// exprText restores an expression as SQL, for messages.
func exprText(e ast.ExprNode) string {
	var b strings.Builder
	if err := e.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return "(an expression)"
	}
	return b.String()
}

// implicitDefault returns the value the server gives existing rows in an
// added NOT NULL column without a DEFAULT (checked against MariaDB by
// TestReshapeAgainstMariaDB); false for types where it is not known.
func implicitDefault(n Column) (string, bool) {
	switch {
	case slices.Contains(intRanks, n.Type), n.Type == "float", n.Type == "double":
		return "0", true
	case n.Type == "decimal":
		return storedForm(n, literal{kind: litNumber, text: "0"})
	case n.Type == "date":
		return "0000-00-00", true
	case n.Type == "datetime":
		return "0000-00-00 00:00:00" + zeroFraction(n.FSP), true
	case n.Type == "time":
		return "00:00:00" + zeroFraction(n.FSP), true
	case n.Type == "year":
		return "0", true
	case n.Type == "enum":
		if len(n.Elems) == 0 {
			return "", false
		}
		return n.Elems[0], true
	case n.Type == "binary":
		return strings.Repeat("\x00", n.Length), true
	case n.Type == "bit":
		return strings.Repeat("\x00", (n.Length+7)/8), true
	case n.Type == "set", isStringType(n.Type):
		return "", true
	}
	return "", false
}

// isStringType reports whether a column type holds text or bytes that a
// default gives as they are (CHAR and BINARY aside).
func isStringType(tp string) bool {
	return tp == "varchar" || tp == "varbinary" || tp == "char" ||
		slices.Contains(textRanks, tp) || slices.Contains(blobRanks, tp)
}

func zeroFraction(fsp int) string {
	if fsp <= 0 {
		return ""
	}
	return "." + strings.Repeat("0", fsp)
}

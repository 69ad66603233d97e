package dumpfile

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"
)

// encStyle says how the test encoder lays out INSERT statements.
type encStyle struct {
	quote       byte     // '"' like mydumper 0.10 or '\'' like newer versions
	newer       bool     // "VALUES(r1)\n,(r2)" instead of "VALUES\n(r1),\n(r2)"
	columns     []string // column list, nil for none
	rowsPerStmt int      // 0: one statement
	noise       bool     // comments and blank space between tokens
	doubleQuote bool     // a quote inside a string is doubled, not escaped
}

// encodeFile writes rows as a mydumper-like data file.
func encodeFile(b *bytes.Buffer, rows [][]Value, st encStyle) {
	b.WriteString("/*!40101 SET NAMES binary*/;\n/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n/*!40103 SET TIME_ZONE='+00:00' */;\n")
	sep := func() {
		if st.noise {
			b.WriteString(" /* c */\n -- x\n\t")
		}
	}
	for i, row := range rows {
		if i == 0 || st.rowsPerStmt > 0 && i%st.rowsPerStmt == 0 {
			if i > 0 {
				b.WriteString(";\n")
			}
			b.WriteString("INSERT INTO `t` ")
			if st.columns != nil {
				b.WriteByte('(')
				for j, c := range st.columns {
					if j > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(b, "`%s`", c)
				}
				b.WriteString(") ")
			}
			b.WriteString("VALUES")
			if !st.newer {
				b.WriteByte('\n')
			}
		} else if st.newer {
			b.WriteString("\n,")
		} else {
			b.WriteString(",\n")
		}
		b.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				sep()
				b.WriteByte(',')
			}
			sep()
			encodeValue(b, v, st)
		}
		sep()
		b.WriteByte(')')
	}
	if len(rows) > 0 {
		b.WriteString(";\n")
	}
}

func encodeValue(b *bytes.Buffer, v Value, st encStyle) {
	if v.Charset != "" {
		b.WriteString("_" + v.Charset + " ")
	}
	switch v.Kind {
	case KindNull:
		b.WriteString("NULL")
	case KindNumber:
		b.Write(v.Raw)
	case KindHex:
		if len(v.Raw) == 0 {
			b.WriteString("X''")
		} else {
			b.WriteString("0x" + hex.EncodeToString(v.Raw))
		}
	case KindBit:
		b.WriteString("b'")
		for _, c := range v.Raw {
			fmt.Fprintf(b, "%08b", c)
		}
		b.WriteByte('\'')
	case KindString:
		q := st.quote
		b.WriteByte(q)
		for _, c := range v.Raw {
			switch c {
			case 0:
				b.WriteString(`\0`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case 0x1a:
				b.WriteString(`\Z`)
			case '\\':
				b.WriteString(`\\`)
			case '\'', '"':
				if c == q && st.doubleQuote {
					b.WriteByte(c)
				} else {
					b.WriteByte('\\')
				}
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte(q)
	}
}

// benchRows returns n rows of a 7-column table: int, varchar, decimal,
// datetime, NULL, double, and a binary string with escapes.
func benchRows(n int) [][]Value {
	rows := make([][]Value, n)
	base := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range rows {
		rows[i] = []Value{
			Num(strconv.Itoa(i + 1)),
			S(fmt.Sprintf("customer-%06d@example.com", i)),
			Num(fmt.Sprintf("%d.%02d", i*37%100000, i%100)),
			S(base.Add(time.Duration(i) * time.Second).Format(time.DateTime)),
			N,
			Num(strconv.FormatFloat(float64(i)/7, 'g', -1, 64)),
			S(fmt.Sprintf("\x00bin'%d\n\\\xff", i)),
		}
	}
	return rows
}

func BenchmarkReader(b *testing.B) {
	var buf bytes.Buffer
	const n = 200_000
	encodeFile(&buf, benchRows(n), encStyle{quote: '"', rowsPerStmt: 5000})
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		r := NewReader(bytes.NewReader(data), "bench.sql")
		count := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			count++
		}
		if count != n {
			b.Fatalf("%d rows", count)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "rows/s")
}

package rowimage

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

func TestToUTF8(t *testing.T) {
	lat := &schema.Column{Name: "l", Type: "varchar", Charset: "latin1"}
	got, err := ToUTF8(nil, lat, []byte{'c', 'a', 'f', 0xE9, 0x80})
	if err != nil || string(got) != "café€" {
		t.Fatalf("latin1: %q %v", got, err)
	}
	u := &schema.Column{Name: "u", Type: "varchar", Charset: "utf8mb4"}
	if _, err := ToUTF8(nil, u, []byte{0xff}); err == nil {
		t.Fatal("invalid UTF-8 must be an error")
	}
	if _, err := ToUTF8(nil, &schema.Column{Name: "g", Type: "varchar", Charset: "gbk"}, []byte("x")); err == nil {
		t.Fatal("an unsupported charset must be an error")
	}
	if !IsCharacter(lat) || IsCharacter(&schema.Column{Type: "varbinary", Charset: "binary"}) {
		t.Fatal("IsCharacter")
	}
}

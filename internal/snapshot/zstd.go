package snapshot

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// The Parquet writer's zstd pages are compressed by encoders kept for the
// life of the process, with a bounded window. The library's own codec takes
// its encoders from a sync.Pool, which every garbage collection empties, and
// each new encoder at the default level allocates (and clears) a 16 MiB
// history: under the allocation rate of a table rewrite that was a fifth of
// the rewrite's CPU. A page is at most a few MiB, so a 2 MiB window finds the
// same matches in it; the frames are plain zstd, read by every reader.
const (
	zstdWindow      = 2 << 20
	zstdKeepPerKind = 4 // encoders kept per level: the writers of one process at once
)

func init() {
	inner, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(fmt.Sprintf("snapshot: the zstd codec is not registered: %v", err))
	}
	full, ok := inner.(fullCodec)
	if !ok {
		panic("snapshot: the registered zstd codec lacks the streaming or error-reporting methods")
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &keptZstd{fullCodec: full, kept: map[zstd.EncoderLevel]chan *zstd.Encoder{}})
}

// fullCodec is what the library's zstd codec implements; keptZstd passes
// every method but the block encoders through to it.
type fullCodec interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

// keptZstd is the zstd codec with encoders kept per level (zstdKeepPerKind
// each; more at once are made and dropped).
type keptZstd struct {
	fullCodec
	mu   sync.Mutex
	kept map[zstd.EncoderLevel]chan *zstd.Encoder
}

// Encode compresses src at the default level.
func (z *keptZstd) Encode(dst, src []byte) []byte {
	return z.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

// EncodeLevel compresses src as one zstd frame at level (a zstd level, or
// compress.DefaultCompressionLevel).
func (z *keptZstd) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		l = zstd.EncoderLevelFromZstd(level)
	}
	enc := z.get(l)
	out := enc.EncodeAll(src, dst[:0])
	z.put(l, enc)
	return out
}

func (z *keptZstd) pool(l zstd.EncoderLevel) chan *zstd.Encoder {
	z.mu.Lock()
	defer z.mu.Unlock()
	c, ok := z.kept[l]
	if !ok {
		c = make(chan *zstd.Encoder, zstdKeepPerKind)
		z.kept[l] = c
	}
	return c
}

func (z *keptZstd) get(l zstd.EncoderLevel) *zstd.Encoder {
	select {
	case enc := <-z.pool(l):
		return enc
	default:
	}
	// The options are constants: NewWriter cannot refuse them.
	enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l), zstd.WithEncoderConcurrency(1),
		zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(zstdWindow))
	if err != nil {
		panic(fmt.Sprintf("snapshot: zstd encoder: %v", err))
	}
	return enc
}

func (z *keptZstd) put(l zstd.EncoderLevel, enc *zstd.Encoder) {
	select {
	case z.pool(l) <- enc:
	default:
	}
}

package segment

import (
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/golang/snappy"
)

// pageSnappy is arrow v17's Snappy codec, except that it compresses into
// the capacity of dst. The v17 page writer grows a buffer to the codec's
// bound and passes it with length 0, and snappy.Encode looks only at the
// length, so every page got a freshly allocated output: 1.3 bytes of
// garbage per byte written, and a collection every few row groups.
type pageSnappy struct{ compress.Codec }

func (c pageSnappy) Encode(dst, src []byte) []byte { return snappy.Encode(dst[:cap(dst)], src) }

func (c pageSnappy) EncodeLevel(dst, src []byte, _ int) []byte {
	return snappy.Encode(dst[:cap(dst)], src)
}

func init() {
	// This process's Parquet writers are ours alone (the library links no
	// other user of arrow's registry).
	if c, err := compress.GetCodec(compress.Codecs.Snappy); err == nil {
		compress.RegisterCodec(compress.Codecs.Snappy, pageSnappy{c})
	}
}

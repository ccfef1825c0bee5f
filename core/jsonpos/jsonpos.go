package jsonpos

import "bytes"

// LineCol is the 1-based line and column (in bytes) of the byte just
// before offset end of b, the byte that encoding/json's offsets blame:
// SyntaxError.Offset, UnmarshalTypeError.Offset and Decoder.InputOffset
// all point just past it. An offset out of range is clamped to b.
func LineCol(b []byte, end int64) (line, col int) {
	off := int(max(0, min(end, int64(len(b)))-1)) // the blamed byte
	before := b[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

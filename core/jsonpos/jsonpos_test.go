package jsonpos

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineCol(t *testing.T) {
	doc := []byte("{\n  \"a\": 1,\n  \"b\": x\n}")
	tests := []struct {
		name      string
		end       int64
		line, col int
	}{
		{"first byte", 1, 1, 1},
		{"start of a line", 3, 2, 1},
		{"inside a line", 9, 2, 7},
		{"the newline itself is on its line", 2, 1, 2},
		{"zero", 0, 1, 1},
		{"past the end", 1000, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, col := LineCol(doc, tt.end)
			assert.Equal(t, []int{tt.line, tt.col}, []int{line, col})
		})
	}
}

func TestLineColOfASyntaxError(t *testing.T) {
	doc := []byte("{\n  \"a\": 1,\n  \"b\": x\n}")
	var v any
	var se *json.SyntaxError
	require.ErrorAs(t, json.Unmarshal(doc, &v), &se)
	line, col := LineCol(doc, se.Offset)
	assert.Equal(t, []int{3, 8}, []int{line, col}, "the x")
}

package script

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsageStep(t *testing.T) {
	s, err := Parse("s", "on *\n  say hi\n  usage input=1200 output=340  cache_read=100 cache_write=50 reasoning=20 model=m-1\n")
	require.NoError(t, err)
	steps, _ := s.Plan("x")
	require.Len(t, steps, 2)
	u := steps[1].Usage
	require.NotNil(t, u)
	assert.Equal(t, Tokens{Input: 1200, Output: 340, CacheRead: 100, CacheWrite: 50, Reasoning: 20}, u.Tokens("ignored"))
	assert.Equal(t, "m-1", u.Model)
}

func TestUsageStepErrors(t *testing.T) {
	tests := []struct{ name, step, want string }{
		{"no keys", "usage", "s:2:9: usage needs KEY=VALUE"},
		{"not a pair", "usage input=1 output", "s:2:17: usage: \"output\" is not KEY=VALUE"},
		{"empty value", "usage input=", "s:2:9: usage: \"input=\" is not KEY=VALUE"},
		{"unknown key", "usage input=1  tokens=3", "s:2:18: usage: unknown key \"tokens\""},
		{"negative", "usage output=-1", "s:2:9: usage: output=-1 is not a count"},
		{"not a number", "usage input=12k", "s:2:9: usage: input=12k is not a count"},
		{"twice", "usage input=1 input=2", "s:2:17: usage: input given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s", "on *\n  "+tt.step+"\n")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestUsageDefaults(t *testing.T) {
	tests := []struct {
		name   string
		usage  Usage
		answer string
		want   Tokens
	}{
		{"nothing set, empty answer", Usage{}, "", Tokens{Input: 12, Output: 1}},
		{"nothing set, a quarter of the bytes", Usage{}, "hello there, a longer answer", Tokens{Input: 12, Output: 7}},
		{"set counts win, zero included", Usage{Output: ptr(0), CacheRead: ptr(5)}, "hello there, a longer answer", Tokens{Input: 12, CacheRead: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.usage.Tokens(tt.answer))
		})
	}
}

// A usage step counts for the whole model response it is in, and only
// for it: the steps after a tool call are the next response.
func TestResponseUsage(t *testing.T) {
	s, err := Parse("s", `on *
  say before
  usage input=100 model=a
  run true
  usage output=7
  say after
  usage output=8 reasoning=2
  permission ls
  say last
`)
	require.NoError(t, err)
	steps, _ := s.Plan("x")
	first := ResponseUsage(steps)
	assert.Equal(t, Tokens{Input: 100, Output: 1}, first.Tokens(""))
	assert.Equal(t, "a", first.Model)
	second := ResponseUsage(steps[4:])
	assert.Equal(t, Tokens{Input: 12, Output: 8, Reasoning: 2}, second.Tokens(""), "the later step wins")
	assert.Empty(t, second.Model, "a model is the response's own")
	assert.Equal(t, Usage{}, ResponseUsage(steps[8:]))
}

func ptr(n int64) *int64 { return &n }

// FuzzUsageStep: what a usage step writes is what it reads, and any
// argument either parses or names its fault, never panics.
func FuzzUsageStep(f *testing.F) {
	f.Add(uint32(1200), uint32(340), uint32(100), uint32(50), uint32(20), "big-model", "input=1 junk")
	f.Add(uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), "m", "")
	f.Fuzz(func(t *testing.T, in, out, cr, cw, rs uint32, model, arg string) {
		if model == "" || strings.ContainsAny(model, " \t\r\n") {
			model = "m"
		}
		line := fmt.Sprintf("usage reasoning=%d model=%s cache_write=%d input=%d cache_read=%d output=%d", rs, model, cw, in, cr, out)
		s, err := Parse("s", "on *\n  "+line+"\n")
		require.NoError(t, err, line)
		steps, _ := s.Plan("x")
		u := steps[0].Usage
		assert.Equal(t, Tokens{Input: int64(in), Output: int64(out), CacheRead: int64(cr), CacheWrite: int64(cw), Reasoning: int64(rs)}, u.Tokens(""))
		assert.Equal(t, model, u.Model)

		if strings.ContainsAny(arg, "\r\n") {
			return
		}
		if _, err := Parse("s", "on *\n  usage "+arg+"\n"); err != nil {
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, 2, se.Line)
			assert.GreaterOrEqual(t, se.Col, 3)
		}
	})
}

package deliver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTypedAfter(t *testing.T) {
	sent := "[T id=1]\n\tjob 1\n[/T]"
	for _, tc := range []struct{ name, prompt, want string }{
		{"the text alone", sent, ""},
		{"keys typed after it", sent + "operator", "operator"},
		{"rewrapped and trimmed by the agent", "[T id=1]\n  job 1\n[/T] draft \n", " draft"},
		{"merged after a queued prompt", "earlier\n\n" + sent + "x", "x"},
		{"typed before it is not after", "draft " + sent, ""},
		{"another text", "[T id=2]\njob 1\n[/T]x", ""},
		{"a prompt queued after it (Gemini merges them)", sent + "\n\nlater", ""},
		{"keys, then a prompt queued after it", sent + "op\n\nlater", "op"},
		{"lines the agent added", sent + "\n--- Content from referenced files ---\nx", ""},
		{"more than a person types in the window", sent + strings.Repeat("x", 201), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, typedAfter(tc.prompt, sent))
		})
	}
}

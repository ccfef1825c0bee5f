package blocks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		ids     []string
		bodies  []string
		errs    []string // "line:col" prefixes
		pending bool
	}{
		{
			name:   "one block",
			text:   "noise\n[[POLI:MSG {\"to\":\"EXECUTER\",\"type\":\"plan\",\"id\":\"t1\"}]]\nstep 1\nstep 2\n[[/POLI:MSG]]\n",
			ids:    []string{"t1"},
			bodies: []string{"step 1\nstep 2"},
		},
		{
			name:   "indented body (as agents draw answers) is dedented",
			text:   "⏺ [[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"d\"}]]\n  1. one\n    nested\n  [[/POLI:MSG]]",
			ids:    []string{"d"},
			bodies: []string{"1. one\n  nested"},
		},
		{
			name:   "ANSI colours and CRLF",
			text:   "\x1b[1m[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"c\"}]]\x1b[0m\r\nbody\r\n[[/POLI:MSG]]",
			ids:    []string{"c"},
			bodies: []string{"body"},
		},
		{
			name:   "redrawn block counted once, last copy kept",
			text:   "[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"r\"}]]\nold\n[[/POLI:MSG]]\n…redraw…\n[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"r\"}]]\nnew\n[[/POLI:MSG]]",
			ids:    []string{"r"},
			bodies: []string{"new"},
		},
		{
			name: "partial block ignored",
			text: "[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"p\"}]]\nhalf of the bo",
		},
		{
			name: "partial header ignored",
			text: "[[POLI:MSG {\"to\":\"A\",\"ty",
		},
		{
			name:   "malformed header reported with position and skipped",
			text:   "line one\n  [[POLI:MSG {\"to\":\"A\" \"id\":\"m\"}]]\nbody\n[[/POLI:MSG]]\n[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"g\"}]]\ngood\n[[/POLI:MSG]]",
			ids:    []string{"g"},
			bodies: []string{"good"},
			errs:   []string{"2:"},
		},
		{
			name:   "nested opener abandons the first",
			text:   "[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"o1\"}]]\nfirst\n[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"o2\"}]]\nsecond\n[[/POLI:MSG]]",
			ids:    []string{"o2"},
			bodies: []string{"second"},
			errs:   []string{"1:1"},
		},
		{
			name: "missing id",
			text: "[[POLI:MSG {\"to\":\"A\",\"type\":\"x\"}]]\nb\n[[/POLI:MSG]]",
			errs: []string{"1:1"},
		},
		{
			name:   "]] inside a JSON string",
			text:   "[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"s]]x\"}]]\nb\n[[/POLI:MSG]]",
			ids:    []string{"s]]x"},
			bodies: []string{"b"},
		},
		{
			name: "wide characters before the tag count as one column",
			text: "日本 [[POLI:MSG {\"to\":\"A\" x}]]\nb\n[[/POLI:MSG]]",
			errs: []string{"1:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, errs := Parse(tt.text)
			var ids, bodies []string
			for _, b := range blocks {
				ids, bodies = append(ids, b.ID), append(bodies, b.Body)
			}
			assert.Equal(t, tt.ids, ids)
			assert.Equal(t, tt.bodies, bodies)
			require.Len(t, errs, len(tt.errs), "%v", errs)
			for i, e := range errs {
				assert.True(t, strings.HasPrefix(e.Error(), tt.errs[i]), "got %q, want prefix %q", e.Error(), tt.errs[i])
			}
		})
	}
}

func TestMalformedHeaderColumn(t *testing.T) {
	_, errs := Parse("x\n[[POLI:MSG {\"to\":\"A\",,}]]\nb\n[[/POLI:MSG]]")
	require.Len(t, errs, 1)
	assert.Equal(t, 2, errs[0].Line)
	assert.Equal(t, 22, errs[0].Col, "points at the second comma")
}

func FuzzParse(f *testing.F) {
	f.Add("[[POLI:MSG {\"to\":\"A\",\"type\":\"x\",\"id\":\"1\"}]]\nb\n[[/POLI:MSG]]")
	f.Add("[[POLI:MSG {\"to\":\"A\",\"ty")
	f.Add("[[POLI:MSG [[POLI:MSG {}]] [[/POLI:MSG]] ]]")
	f.Add("\x1b[31m[[POLI:MSG {\"to\":\"\\\"]]\",\"id\":\"2\"}]]\r\n[[/POLI:MSG]]")
	f.Fuzz(func(t *testing.T, s string) {
		blocks, errs := Parse(s)
		seen := map[string]bool{}
		for _, b := range blocks {
			if b.ID == "" || b.To == "" {
				t.Fatalf("block without id or to: %+v", b)
			}
			if seen[b.ID] {
				t.Fatalf("id %q twice", b.ID)
			}
			seen[b.ID] = true
			if b.Line < 1 || b.Col < 1 {
				t.Fatalf("bad position %+v", b)
			}
		}
		for _, e := range errs {
			if e.Line < 1 || e.Col < 1 {
				t.Fatalf("bad error position %+v", e)
			}
		}
		// Parsing is deterministic.
		again, _ := Parse(s)
		if len(again) != len(blocks) {
			t.Fatal("nondeterministic")
		}
	})
}

// BenchmarkParse10MB measures parser throughput on a 10 MB noisy capture:
// ANSI colours, wrapped prose, partial and malformed blocks, redraws.
func BenchmarkParse10MB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<20; i++ {
		fmt.Fprintf(&sb, "\x1b[2m⏺ thinking about step %d of the plan, see [[brackets]] and {json} noise\x1b[0m\n", i)
		switch i % 50 {
		case 0:
			fmt.Fprintf(&sb, "[[POLI:MSG {\"to\":\"EXECUTER\",\"type\":\"plan\",\"id\":\"t-%d\"}]]\n1. do it\n2. check it\n[[/POLI:MSG]]\n", i/200)
		case 25:
			fmt.Fprintf(&sb, "[[POLI:MSG {\"to\":\"X\" \"id\":\"bad-%d\"}]]\nbroken\n[[/POLI:MSG]]\n", i)
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Parse(text)
	}
}

func TestParseTextKeepsTheModelsBytes(t *testing.T) {
	body := "   - indented three, **bold**, `code`\n   - second\n\n```go\nfmt.Println(\"x\")\n```\n" + strings.Repeat("long ", 60) + "end  "
	text := "Here is the plan.\n[[POLI:MSG {\"to\":\"EXECUTER\",\"type\":\"plan\",\"id\":\"p\"}]]\n" + body + "\n[[/POLI:MSG]]\nDone."
	found, errs := ParseText(text)
	require.Empty(t, errs)
	require.Len(t, found, 1)
	assert.Equal(t, body, found[0].Body, "not dedented, not trimmed")
	screen, _ := Parse(text)
	assert.NotEqual(t, body, screen[0].Body, "a screen's body is dedented and trimmed")
}

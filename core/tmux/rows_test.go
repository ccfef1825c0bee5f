package tmux

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAlignRows(t *testing.T) {
	tests := []struct {
		name        string
		rows, lines []string
		of          []int
		ok          bool
	}{
		{"no wraps", []string{"a", "", "b"}, []string{"a", "", "b"}, []int{0, 1, 2}, true},
		{"a wrapped row", []string{"abc", "de", "f"}, []string{"abcde", "f"}, []int{0, 0, 1}, true},
		{"two rows wrapped into one line", []string{"ab", "cd", "e", "x"}, []string{"abcde", "x"}, []int{0, 0, 0, 1}, true},
		{"rows that are not the lines", []string{"a", "b"}, []string{"ab", "c"}, nil, false},
		{"a row left over", []string{"a", "b"}, []string{"a"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			of, ok := alignRows(tt.rows, tt.lines)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.of, of)
			}
		})
	}
}

func TestRowsKeepTheirNumbersAsTheScreenScrolls(t *testing.T) {
	c := testServer(t, "sh", "-c", "printf 'first\\n'; read x; i=0; while [ $i -lt 40 ]; do echo row$i; i=$((i+1)); done; printf '%0100d\\n' 7; sleep 60")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	panes, err := c.ListPanes(ctx, "s")
	require.NoError(t, err)
	pane := panes[0].ID
	var before, after []string
	for !strings.Contains(strings.Join(before, "\n"), "first") {
		r, err := c.Rows(ctx, pane, 5)
		require.NoError(t, err)
		before = r.Raw
		assert.Equal(t, 0, r.History)
		assert.Equal(t, 0, r.First)
	}
	require.NoError(t, c.SendKey(ctx, pane, "Enter"))
	for ctx.Err() == nil {
		got, err := c.Rows(ctx, pane, 100)
		require.NoError(t, err)
		if !strings.Contains(strings.Join(got.Lines, "\n"), strings.Repeat("0", 99)+"7") {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		after = got.Raw
		assert.Greater(t, got.History, 0, "40 rows scrolled a 24-row screen")
		assert.Equal(t, 0, got.First, "all the scrollback was read")
		assert.Equal(t, "first", after[0], "row 0 is still the first row printed")
		assert.Equal(t, "row0", after[2])
		// The 100-character row wraps on the 80-column screen: two rows,
		// one line.
		i := len(after) - 1
		for after[i] == "" {
			i--
		}
		assert.Equal(t, got.LineOf[i], got.LineOf[i-1])
		assert.Equal(t, strings.Repeat("0", 99)+"7", got.Lines[got.LineOf[i]])

		// The control connection reads the same.
		cc, err := c.Control(ctx, "s", false)
		require.NoError(t, err)
		defer cc.Close()
		viaCC, err := cc.Rows(ctx, pane, 100)
		require.NoError(t, err)
		assert.Equal(t, got, viaCC)

		// A read of less scrollback starts further down, numbered alike.
		part, err := c.Rows(ctx, pane, 3)
		require.NoError(t, err)
		assert.Equal(t, got.History-3, part.First)
		assert.Equal(t, after[part.First], part.Raw[0])
		return
	}
	t.Fatal("the rows never came")
}

package script

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Usage is what the usage steps of one model response say of it: its
// token counts, as the model's API reports them, and the model's name. A
// count no step sets is nil and takes its default (Tokens); Model "" is
// the agent's own.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning *int64
	Model                                           string
}

// Tokens are the token counts of one model response, named as a usage
// step names them.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning"`
}

// DefaultInput is the input count of a response whose usage no step sets.
const DefaultInput = 12

// Tokens are u's counts, with the defaults where u sets none: input
// DefaultInput, output a quarter of answer's bytes (at least 1), the
// others 0.
func (u Usage) Tokens(answer string) Tokens {
	get := func(p *int64, def int64) int64 {
		if p == nil {
			return def
		}
		return *p
	}
	return Tokens{
		Input:      get(u.Input, DefaultInput),
		Output:     get(u.Output, int64(max(1, len(answer)/4))),
		CacheRead:  get(u.CacheRead, 0),
		CacheWrite: get(u.CacheWrite, 0),
		Reasoning:  get(u.Reasoning, 0),
	}
}

// Merge is u with what v sets put over it.
func (u Usage) Merge(v Usage) Usage {
	for _, f := range []struct{ dst, src **int64 }{
		{&u.Input, &v.Input}, {&u.Output, &v.Output}, {&u.CacheRead, &v.CacheRead},
		{&u.CacheWrite, &v.CacheWrite}, {&u.Reasoning, &v.Reasoning},
	} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	if v.Model != "" {
		u.Model = v.Model
	}
	return u
}

// EndsResponse says whether st ends the model response it is in: a tool
// call (permission, run, write, tool; the steps after it are the next
// response, once the tool's result is back), or a step after which the
// response never ends normally (fail, crash, hang) or the turn ends
// (freeze).
func (st Step) EndsResponse() bool {
	switch st.Kind {
	case "permission", "run", "write", "tool", "fail", "crash", "hang", "freeze":
		return true
	}
	return false
}

// ResponseUsage is the usage of the model response that steps begin:
// its usage steps, up to the step that ends it, merged in order. A usage
// step counts for the whole response it is in, wherever in it.
func ResponseUsage(steps []Step) Usage {
	var u Usage
	for _, st := range steps {
		if st.Kind == "usage" && st.Usage != nil {
			u = u.Merge(*st.Usage)
		}
		if st.EndsResponse() {
			break
		}
	}
	return u
}

// parseUsage reads a usage step's KEY=VALUE words; on error it also
// returns the offset in arg of the word at fault.
func parseUsage(arg string) (*Usage, int, error) {
	u := &Usage{}
	seen := map[string]bool{}
	if strings.TrimSpace(arg) == "" {
		return nil, 0, errors.New("usage needs KEY=VALUE: input, output, cache_read, cache_write, reasoning (counts), model (a name)")
	}
	for off := 0; off < len(arg); {
		if arg[off] == ' ' || arg[off] == '\t' {
			off++
			continue
		}
		end := off + strings.IndexAny(arg[off:]+" ", " \t")
		word := arg[off:end]
		key, val, ok := strings.Cut(word, "=")
		if !ok || val == "" {
			return nil, off, fmt.Errorf("usage: %q is not KEY=VALUE", word)
		}
		if seen[key] {
			return nil, off, fmt.Errorf("usage: %s given twice", key)
		}
		seen[key] = true
		if key == "model" {
			u.Model = val
			off = end
			continue
		}
		dst := map[string]**int64{"input": &u.Input, "output": &u.Output, "cache_read": &u.CacheRead,
			"cache_write": &u.CacheWrite, "reasoning": &u.Reasoning}[key]
		if dst == nil {
			return nil, off, fmt.Errorf("usage: unknown key %q (want input, output, cache_read, cache_write, reasoning, model)", key)
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 {
			return nil, off, fmt.Errorf("usage: %s=%s is not a count", key, val)
		}
		*dst = &n
		off = end
	}
	return u, 0, nil
}

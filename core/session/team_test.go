package session

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRestoreAllBringsBackTheDeadOnesAndCountsFailures(t *testing.T) {
	teams := []Stored{
		{Name: "a", Cwd: "/a", State: TeamRestorable},
		{Name: "live", Cwd: "/l", State: TeamLive},
		{Name: "b", Cwd: "/b", State: TeamRestorable},
	}
	var started []string
	out, err := RestoreAll(teams, func(t Stored) (Result, error) {
		started = append(started, t.Name)
		if t.Name == "b" {
			return Result{}, errors.New("no claude")
		}
		return Result{Session: t.Name}, nil
	})
	assert.Equal(t, []string{"a", "b"}, started, "only the dead teams")
	assert.EqualError(t, err, "1 of 2 teams not brought back")
	assert.Equal(t, []Restored{
		{Team: "a", Cwd: "/a", Result: Result{Session: "a"}},
		{Team: "b", Cwd: "/b", Err: out[1].Err, Error: "no claude"},
	}, out)
}

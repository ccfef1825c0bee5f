package scenarios

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// How many scenarios run at once. The real agents (node, each a few
// hundred MB) take the CPU; the mocks mostly wait on their scripts'
// timers. Two of each side by side keep both classes' wall time
// overlapping — the suite's time is the longer class, not their sum —
// with at most two real agents' scenarios at once, as on a machine
// where the user's own work runs beside party. PARTY_SCENARIO_SLOTS
// ("REAL,MOCK") changes them.
var (
	realSlots = make(chan struct{}, slotsFromEnv(0, 2))
	mockSlots = make(chan struct{}, slotsFromEnv(1, 2))
)

func slotsFromEnv(i, def int) int {
	realN, mockN, ok := strings.Cut(os.Getenv("PARTY_SCENARIO_SLOTS"), ",")
	if !ok {
		return def
	}
	n, err := strconv.Atoi([]string{realN, mockN}[i])
	if err != nil || n < 1 {
		return def
	}
	return n
}

// takeSlot waits for a slot of the scenario's class and returns its
// release.
func takeSlot(workDir string) func() {
	slots := mockSlots
	if isRealScenario(workDir) {
		slots = realSlots
	}
	slots <- struct{}{}
	return func() { <-slots }
}

// gateParallel lets every scenario start at once (go test -parallel is
// one limit for all), so that the slots above decide what runs: the
// scenarios are sorted by name, and a single limit fills with real
// agents' scenarios for the whole real_ stretch. A -parallel given on
// the command line is kept. It does nothing when the binary runs as one
// of the scripts' commands (named in commands), whose flags are theirs.
func gateParallel(commands map[string]func()) {
	if commands[filepath.Base(os.Args[0])] != nil {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "1000")
	}
}

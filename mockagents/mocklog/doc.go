// Package mocklog is the format of the mock log: one JSON line per text
// an agent took ({"agent","pane","seq","mode","text","time"}, Entry),
// appended under an flock so that concurrent writers never interleave
// (Append) and read back by tests (Read). The mock agents (mockagents)
// write it for every submission, and their benchmark trace in the same
// format; the fake model server (mockagents/fakemodel) writes it for
// every user text a real agent sent.
package mocklog

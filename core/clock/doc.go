// Package clock is the source of time for core. Real code uses Real; the
// simulator (sim) supplies a virtual clock so that waits of minutes run in
// microseconds.
package clock

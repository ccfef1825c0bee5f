// Package jsonpos says where in a JSON document an offset that
// encoding/json reports lies, as a line and column people can find.
package jsonpos

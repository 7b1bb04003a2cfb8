package query_test

import (
	"errors"
	"testing"

	"github.com/sase-cep/sase/query"
)

// fake is a Compiler that compiles nothing; only its identity matters.
type fake struct{ query.Compiler }

// Without a compiler linked in, Registered says which package to import;
// once one registers, it is the one returned.
func TestRegistered(t *testing.T) {
	if c, err := query.Registered(); !errors.Is(err, query.ErrNoCompiler) || c != nil {
		t.Fatalf("Registered() = %v, %v before Register, want ErrNoCompiler", c, err)
	}
	f := &fake{}
	query.Register(f)
	if c, err := query.Registered(); err != nil || c != f {
		t.Fatalf("Registered() = %v, %v, want the registered compiler", c, err)
	}
}

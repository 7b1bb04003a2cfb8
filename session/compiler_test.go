package session_test

// The session compiles its statements through the compiler that package
// compiler registers (query.Registered).
import _ "github.com/sase-cep/sase/compiler"

package exec_test

import (
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

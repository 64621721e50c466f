package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"plain", errors.New("x"), System},
		{"usage", New(Usage, "bad flag"), Usage},
		{"wrapped", fmt.Errorf("load: %w", New(Invalid, "bad key")), Invalid},
		{"outermost wins", New(Denied, "deny: %w", New(Execution, "x")), Denied},
		{"nil wrap", Wrap(Usage, nil), System},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KindOf(tc.err); got != tc.want {
				t.Errorf("KindOf(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
	if !errors.Is(Wrap(Usage, errors.ErrUnsupported), errors.ErrUnsupported) {
		t.Error("Wrap hides its cause from errors.Is")
	}
}

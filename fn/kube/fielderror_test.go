package kube

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitFieldError(t *testing.T) {
	for _, tc := range []struct {
		err          error
		field        string
		wantF, wantM string
	}{
		{errors.New("plain"), "fallback", "fallback", "plain"},
		{FieldErrorf("spec.a", "bad"), "fallback", "spec.a", "bad"},
		{fmt.Errorf("outer: %w", FieldErrorf("spec.b", "worse")), "", "spec.b", "worse"},
		{&FieldError{Err: errors.New("no field")}, "fallback", "", "no field"},
	} {
		f, m := SplitFieldError(tc.err, tc.field)
		require.Equal(t, [2]string{tc.wantF, tc.wantM}, [2]string{f, m}, "%v", tc.err)
	}
}

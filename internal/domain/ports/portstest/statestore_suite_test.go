package portstest

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// storeOwned are fields a store sets in its files and clears in memory: a run never holds them.
var storeOwned = map[string]bool{
	"StepState.OutputFile": true, "StepState.OutputSize": true,
	"ToolCallResult.OutputFile": true, "ToolCallResult.OutputSize": true,
	"Message.ContentFile": true, "Message.ContentSize": true,
}

// TestFixtureFillsEveryField keeps the conformance suite complete: a field added to a state
// type must be set somewhere in fullRun, or no store is checked to keep it.
func TestFixtureFillsEveryField(t *testing.T) {
	set := map[string]bool{}
	all := map[string]bool{}
	collectFields(reflect.ValueOf(fullRun("r")), set, all)
	for f := range all {
		if !set[f] && !storeOwned[f] {
			t.Errorf("fullRun leaves %s at its zero value: set it in statestore_suite.go", f)
		}
	}
}

// collectFields records, for every struct field of the state package reachable from v, its
// name in all and, if it is not zero somewhere, in set.
func collectFields(v reflect.Value, set, all map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectFields(v.Elem(), set, all)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			collectFields(it.Value(), set, all)
		}
	case reflect.Slice:
		for i := range v.Len() {
			collectFields(v.Index(i), set, all)
		}
	case reflect.Struct:
		if !strings.HasSuffix(v.Type().PkgPath(), "/domain/state") {
			return
		}
		for i := range v.NumField() {
			name := v.Type().Name() + "." + v.Type().Field(i).Name
			all[name] = true
			if !v.Field(i).IsZero() {
				set[name] = true
			}
			collectFields(v.Field(i), set, all)
		}
	}
}

func TestDiffValues(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name      string
		got, want any
		diff      string // a substring of the difference; "" for none
	}{
		{"equal", map[string]any{"a": []any{1, "x"}}, map[string]any{"a": []any{1, "x"}}, ""},
		{"same instant, other zone", when.In(time.FixedZone("X", 3600)), when, ""},
		{"nil and empty map", map[string]int(nil), map[string]int{}, ""},
		{"nil and empty slice", []string(nil), []string{}, ""},
		{"int and float", map[string]any{"n": 1}, map[string]any{"n": 1.0}, `["n"]: got 1, want 1`},
		{"missing key", map[string]int{}, map[string]int{"k": 1}, `["k"]: missing`},
		{"extra key", map[string]int{"k": 1}, map[string]int{}, `["k"]: unexpected`},
		{"length", []int{1}, []int{1, 2}, "got 1 elements, want 2"},
		{"string", "abcdef", "abcxef", "differ at byte 3"},
		{"nil pointer", (*int)(nil), new(int), "got (*int)(nil)"},
		{"struct field", struct{ A, B int }{1, 2}, struct{ A, B int }{1, 3}, "B: got 2, want 3"},
		{"times", when, when.Add(time.Second), "value: got 2026-01-02 03:04:05"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := diffValues(tc.got, tc.want)
			if tc.diff == "" && d != "" || tc.diff != "" && !strings.Contains(d, tc.diff) {
				t.Errorf("diffValues(%#v, %#v) = %q, want %q", tc.got, tc.want, d, tc.diff)
			}
		})
	}
}

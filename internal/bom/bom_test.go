package bom

import (
	"errors"
	"testing"
)

func TestStrip(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            error
	}{
		{name: "no mark", in: "name: a\n", want: "name: a\n"},
		{name: "empty", in: "", want: ""},
		{name: "UTF-8 mark", in: "\xef\xbb\xbfname: a\n", want: "name: a\n"},
		{name: "only a mark", in: "\xef\xbb\xbf", want: ""},
		{name: "two marks: the second is text", in: "\xef\xbb\xbf\xef\xbb\xbfname: a\n", want: "\xef\xbb\xbfname: a\n"},
		{name: "a mark further on is text", in: "name: a\n\xef\xbb\xbfb: c\n", want: "name: a\n\xef\xbb\xbfb: c\n"},
		{name: "part of a mark is not one", in: "\xef\xbbname", want: "\xef\xbbname"},
		{name: "UTF-16 LE", in: "\xff\xfen\x00", err: ErrUTF16},
		{name: "UTF-16 BE", in: "\xfe\xff\x00n", err: ErrUTF16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Strip([]byte(tt.in))
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Errorf("Strip(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
}

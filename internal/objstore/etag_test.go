package objstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expected values were computed outside Go with md5sum and xxd:
//
//	printf 'hello world' | md5sum
//	(for f in p1 p2 p3; do md5sum $f | cut -c1-32 | xxd -r -p; done) | md5sum
//
// with p1 = 5 MiB of 'a', p2 = 5 MiB of 'b', p3 = "c".
func TestComputeETagKnownValues(t *testing.T) {
	const mib = 1 << 20
	threeParts := []byte(strings.Repeat("a", 5*mib) + strings.Repeat("b", 5*mib) + "c")
	tests := []struct {
		name     string
		data     []byte
		partSize int64
		want     string
	}{
		{"empty", nil, 5 * mib, "d41d8cd98f00b204e9800998ecf8427e"},
		{"single part", []byte("hello world"), 5 * mib, "5eb63bbbe01eeed093cb22bb8f5acdc3"},
		{"exactly one part", threeParts[:5*mib], 5 * mib, "79b281060d337b9b2b84ccf390adcf74"},
		// The same bytes in one part give the plain MD5 of the whole.
		{"one big part", threeParts, 16 * mib, "8197442490d042888e3848a0de8dc2ed"},
		{"three parts", threeParts, 5 * mib, "0a97f1336a2298a6c3e9adaa562a9eec-3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ComputeETag(bytes.NewReader(tt.data), int64(len(tt.data)), tt.partSize)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ComputeETag = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestComputeETagShortReader(t *testing.T) {
	// The reader ends before the size given: an error, not a wrong ETag.
	_, err := ComputeETag(bytes.NewReader([]byte("short")), 10, MinPartSize)
	if err == nil {
		t.Fatal("ComputeETag of a reader shorter than size: no error")
	}
}

func TestLayout(t *testing.T) {
	tests := []struct {
		size, partSize int64
		want           []part
		wantErr        string
	}{
		{size: 0, partSize: 10, want: []part{{1, 0, 0}}},
		{size: 10, partSize: 10, want: []part{{1, 0, 10}}},
		{size: 11, partSize: 10, want: []part{{1, 0, 10}, {2, 10, 1}}},
		{size: 30, partSize: 10, want: []part{{1, 0, 10}, {2, 10, 10}, {3, 20, 10}}},
		{size: 10*MaxParts + 1, partSize: 10, wantErr: "raise tiered_storage.part_size"},
		{size: -1, partSize: 10, wantErr: "negative size"},
	}
	for _, tt := range tests {
		got, err := layout(tt.size, tt.partSize)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("layout(%d, %d) error = %v, want one containing %q", tt.size, tt.partSize, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("layout(%d, %d): %v", tt.size, tt.partSize, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(part{})); diff != "" {
			t.Errorf("layout(%d, %d) (-want +got):\n%s", tt.size, tt.partSize, diff)
		}
	}
}

package decode

import (
	"bytes"
	"encoding/binary"
)

// Container kinds recognised by their first bytes.
const (
	ContainerUnknown = ""
	ContainerY4M     = "yuv4mpegpipe"
	ContainerMP4     = "mp4/mov" // ISO base media (MP4, MOV, 3GP, fragmented MP4)
	ContainerMKV     = "matroska/webm"
	ContainerTS      = "mpegts"
	ContainerOther   = "other" // AVI, FLV, Ogg, IVF, MPEG-PS: ffmpeg reads them, nothing needs seeking
)

// tsPacket is an MPEG-TS packet; M2TS (Blu-ray) packets carry a 4-byte prefix.
const (
	tsPacket   = 188
	m2tsPacket = 192
)

// isoTopBoxes are box types that may open an ISO base media file.
var isoTopBoxes = []string{"ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "styp", "sidx", "moof"}

// Sniff names the container that head, the first bytes of an input, starts
// with, or ContainerUnknown: raw YUV has no signature, and neither have the
// formats only ffprobe can recognise (a raw H.264 stream, say). Only strong
// signatures count, so that raw video is not mistaken for a container.
func Sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("YUV4MPEG2 ")):
		return ContainerY4M
	case len(head) >= 8 && isISOBox(head[4:8]) && validBoxSize(binary.BigEndian.Uint32(head)):
		return ContainerMP4
	case bytes.HasPrefix(head, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return ContainerMKV
	case syncEvery(head, 0, tsPacket) || syncEvery(head, 4, m2tsPacket):
		return ContainerTS
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "AVI ",
		bytes.HasPrefix(head, []byte("FLV\x01")),
		bytes.HasPrefix(head, []byte("OggS")),
		bytes.HasPrefix(head, []byte("DKIF")),
		bytes.HasPrefix(head, []byte{0, 0, 1, 0xBA}):
		return ContainerOther
	}
	return ContainerUnknown
}

// validBoxSize: a box size is 0 (to the end), 1 (a 64-bit size follows)
// or at least the 8 bytes of the size and type.
func validBoxSize(n uint32) bool { return n == 0 || n == 1 || n >= 8 }

func isISOBox(typ []byte) bool {
	for _, b := range isoTopBoxes {
		if string(typ) == b {
			return true
		}
	}
	return false
}

// syncEvery reports whether head has an MPEG-TS sync byte (0x47) at off and
// every size bytes after it, for at least three packets.
func syncEvery(head []byte, off, size int) bool {
	n := 0
	for i := off; i < len(head); i += size {
		if head[i] != 0x47 {
			return false
		}
		n++
	}
	return n >= 3
}

// NeedsSeek reports whether an ISO base media file that starts with head
// must be read with seeks: its index (the moov box) comes after the media
// data (mdat), as when an MP4 is written without "faststart". ffmpeg reads
// such a file only from a seekable source, so the worker spools it to a
// local file first. A head that ends before either box is found counts as
// needing seeks: a long leading box is rare and spooling is always safe.
func NeedsSeek(head []byte) bool {
	off := uint64(0)
	for off+8 <= uint64(len(head)) {
		size := uint64(binary.BigEndian.Uint32(head[off:]))
		typ := string(head[off+4 : off+8])
		switch typ {
		case "moov":
			return false
		case "mdat":
			return true
		}
		switch size {
		case 0: // to the end of the file
			return true
		case 1: // a 64-bit size follows the type
			if off+16 > uint64(len(head)) {
				return true
			}
			size = binary.BigEndian.Uint64(head[off+8:])
		}
		if size < 8 {
			return true // corrupt: let ffmpeg say so, from a seekable file
		}
		off += size
	}
	return true
}

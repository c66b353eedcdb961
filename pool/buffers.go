package pool

import "github.com/valyala/bytebufferpool"

// DefaultMaxPooled is the capacity above which Put drops a buffer instead
// of keeping it for reuse.
const DefaultMaxPooled = 64 << 10

// Buffer is a byte buffer from a pool; append to B directly.
type Buffer = bytebufferpool.ByteBuffer

// Buffers is a pool of byte buffers for one purpose. The zero value is
// ready to use.
type Buffers struct {
	// MaxPooled is the capacity above which Put drops a buffer; 0 means
	// DefaultMaxPooled.
	MaxPooled int

	p bytebufferpool.Pool
}

// The process-wide pools, one per purpose.
var (
	// Responses holds buffers that replies are written into.
	Responses Buffers
	// Requests holds copies of request bytes that outlive the caller's
	// buffer, such as work handed to a worker.
	Requests Buffers
	// Parts holds the replies of batch elements run on workers, before
	// they are gathered into one array.
	Parts Buffers
)

// Get returns an empty buffer. It must be Put when no longer used.
func (b *Buffers) Get() *Buffer { return b.p.Get() }

// Put returns buf to the pool. buf and every slice obtained from it must
// not be used after. Put resets the buffer; do not Reset it before (that
// would teach the pool that buffers are empty). Buffers larger than
// MaxPooled are dropped.
func (b *Buffers) Put(buf *Buffer) {
	if buf == nil {
		return
	}
	limit := b.MaxPooled
	if limit <= 0 {
		limit = DefaultMaxPooled
	}
	if cap(buf.B) > limit {
		return
	}
	if poison {
		all := buf.B[:cap(buf.B)]
		for i := range all {
			all[i] = 0xDD
		}
	}
	b.p.Put(buf)
}

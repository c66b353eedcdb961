package topics

// NOTE: topic names: the longest (MaxLen) and which are valid (Valid).
// ErrInvalidTopic, the refusal of the others, is in errors.go.

// MaxLen is the longest topic name, in bytes.
const MaxLen = 255

// Valid reports whether name can name a topic: 1 to MaxLen bytes of
// ASCII letters, digits and "_-:/=+@", in non-empty parts separated by
// dots. Those names are valid NATS subjects as they are. Safe from any
// goroutine.
func Valid(name string) bool {
	if len(name) == 0 || len(name) > MaxLen {
		return false
	}
	prev := byte('.')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '-', c == ':', c == '/', c == '=', c == '+', c == '@':
		case c == '.':
			if prev == '.' {
				return false
			}
		default:
			return false
		}
		prev = c
	}
	return prev != '.'
}

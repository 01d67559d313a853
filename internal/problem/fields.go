package problem

// Field is a bit set of the Problem fields a message prints.
type Field uint16

// The fields a message template can name.
const (
	FieldIno    Field = 1 << iota // %i, and the inode of %p and %Q
	FieldIno2                     // %j
	FieldDir                      // %d, and the directory of %q and %Q
	FieldBlk                      // %b
	FieldBlk2                     // %c
	FieldGroup                    // %g
	FieldPath                     // %p, %P, %q or %Q
	FieldInode                    // %I... (Problem.Inode)
	FieldDirent                   // %D... (Problem.Dirent)
)

// Fields returns the Problem fields c's message prints, with the
// abbreviations expanded; 0 for an unknown code. Consumers of Report use
// it to tell a field that is 0 from one the message does not name.
func Fields(c Code) Field {
	i, ok := index(c)
	if !ok {
		return 0
	}
	return templateFields(all[i].Msg, 0)
}

func templateFields(msg string, depth int) Field {
	var f Field
	for i := 0; i+1 < len(msg); i++ {
		switch msg[i] {
		case '@':
			i++
			if ch := msg[i]; ch < 128 && abbrevs[ch] != "" && depth < maxRecurse {
				f |= templateFields(abbrevs[ch], depth+1)
			}
		case '%':
			i++
			for i < len(msg)-1 && msg[i] >= '0' && msg[i] <= '9' {
				i++
			}
			switch msg[i] {
			case 'i':
				f |= FieldIno
			case 'j':
				f |= FieldIno2
			case 'd':
				f |= FieldDir
			case 'b':
				f |= FieldBlk
			case 'c':
				f |= FieldBlk2
			case 'g':
				f |= FieldGroup
			case 'p':
				f |= FieldPath | FieldIno
			case 'P':
				f |= FieldPath
			case 'q':
				f |= FieldPath | FieldDir
			case 'Q':
				f |= FieldPath | FieldDir | FieldIno
			case 'I':
				f |= FieldInode
			case 'D':
				f |= FieldDirent
			}
		}
	}
	return f
}

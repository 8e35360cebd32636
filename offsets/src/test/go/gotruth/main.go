// gotruth prints, as JSON, what Go's own debug/elf, debug/dwarf, debug/buildinfo and debug/gosym see in a Go binary; it is the truth the Java inspector (io.gospan.offsets) is tested against. Usage: go run . [-func NAME]... [-struct TYPENAME]... BINARY
//
// Output (field names are a stable contract; absent facts are omitted, never guessed):
//
//	{
//	  "binary": "/path/to/bin",
//	  "has_symtab": true,                       // .symtab present (false after -s)
//	  "text_start": 4198400,                    // .text section address (pclntab entries use the runtime.text
//	                                            // symbol instead when .symtab has it)
//	  "buildinfo": {                            // or "buildinfo_error": "..."
//	    "go_version": "go1.22.12", "path": "example.com/cmd",
//	    "main": {"path": "...", "version": "...", "sum": "...", "replace": null},
//	    "deps": [{"path": "...", "version": "...", "sum": "...",
//	              "replace": {"path": "...", "version": "...", "sum": "...", "replace": null} | null}],
//	    "settings": [{"key": "-compiler", "value": "gc"}]
//	  },
//	  "functions": [{"name": "pkg.(*T).m", "found": true,
//	                 "entry": 4821056, "file_offset": 626752, "source": "symtab" | "pclntab",
//	                 "symtab_entry": 4821056, "pclntab_entry": 4821056}],   // each when known
//	  "dwarf_error": "...",                     // only when DWARF cannot be read (stripped)
//	  "params": [{"func": "pkg.(*T).m", "found": true, "low_pc": 4821056, "abi": "register" | "stack" | "none",
//	              "error": "...",              // only when this function's DWARF could not be decoded
//	              "params": [{"name": "l", "type": "*pkg.T", "size": 8, "is_return": false,
//	                          "location": "list" | "expr" | "none",
//	                          "pieces": [{"size": 8, "kind": "register", "register": "RAX", "dwarf_reg": 0}
//	                                   | {"size": 8, "kind": "stack", "stack_offset": 8, "cfa_offset": 0}
//	                                   | {"size": 8, "kind": "empty"}]}]}],
//	     // stack_offset is relative to SP at the function's entry (SP = CFA - 8 on x86-64:
//	     // the return address); cfa_offset is relative to DW_OP_call_frame_cfa (Go's frame base).
//	     // A value without DW_OP_piece is one piece whose size is the type's size. "type" is the DW_AT_name of
//	     // the type DIE; "size" is debug/dwarf's Type.Size() (-1 when unknown). Results (~r0) have
//	     // is_return=true and usually no location at entry. abi: "register" if any piece is in a register
//	     // at entry, else "stack" if any is on the stack, else "none". Note: Go 1.17's location lists put
//	     // some register arguments in their spill slot at the entry pc; gotruth reports what DWARF says.
//	  "structs": [{"name": "pkg.T", "found": true, "size": 120,
//	               "members": [{"name": "side", "offset": 0, "type": "transport.side", "size": 8, "embedded": false}]}],
//	  "itabs": [{"name": "go:itab.*net.TCPConn,net.Conn", "address": 5300000}],  // every go:itab.*,net.Conn /
//	                                            // go.itab.*,net.Conn (Go < 1.20) symbol in .symtab, sorted by name
//	  "units": [{"name": "net", "ranges": [[4198400, 4200000]]}]  // every compile unit, in .debug_info order:
//	                                            // DW_AT_name and debug/dwarf's Ranges() (low_pc/high_pc,
//	                                            // .debug_ranges or .debug_rnglists); only with DWARF
//	}
//
// All addresses and offsets are decimal JSON numbers (virtual addresses of a non-PIE binary fit in 2^53).
// Exit status 1 only when the file is not ELF; every other failure is reported in the JSON.
package main

import (
	"debug/buildinfo"
	"debug/dwarf"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type Module struct {
	Path    string  `json:"path"`
	Version string  `json:"version"`
	Sum     string  `json:"sum"`
	Replace *Module `json:"replace"`
}

type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type BuildInfo struct {
	GoVersion string    `json:"go_version"`
	Path      string    `json:"path"`
	Main      *Module   `json:"main"`
	Deps      []*Module `json:"deps"`
	Settings  []Setting `json:"settings"`
}

type Function struct {
	Name         string  `json:"name"`
	Found        bool    `json:"found"`
	Entry        *uint64 `json:"entry,omitempty"`
	FileOffset   *uint64 `json:"file_offset,omitempty"`
	Source       string  `json:"source,omitempty"`
	SymtabEntry  *uint64 `json:"symtab_entry,omitempty"`
	PclntabEntry *uint64 `json:"pclntab_entry,omitempty"`
}

type Piece struct {
	Size        int64   `json:"size"`
	Kind        string  `json:"kind"`
	Register    string  `json:"register,omitempty"`
	DwarfReg    *uint64 `json:"dwarf_reg,omitempty"`
	StackOffset *int64  `json:"stack_offset,omitempty"`
	CfaOffset   *int64  `json:"cfa_offset,omitempty"`
}

type Param struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Size     int64   `json:"size"`
	IsReturn bool    `json:"is_return"`
	Location string  `json:"location"`
	Pieces   []Piece `json:"pieces"`
}

type FuncParams struct {
	Func   string  `json:"func"`
	Found  bool    `json:"found"`
	LowPC  uint64  `json:"low_pc,omitempty"`
	ABI    string  `json:"abi,omitempty"`
	Params []Param `json:"params"`
	Error  string  `json:"error,omitempty"`
}

type Member struct {
	Name     string `json:"name"`
	Offset   int64  `json:"offset"`
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	Embedded bool   `json:"embedded"`
}

type Struct struct {
	Name    string   `json:"name"`
	Found   bool     `json:"found"`
	Size    int64    `json:"size,omitempty"`
	Members []Member `json:"members"`
}

type Itab struct {
	Name    string `json:"name"`
	Address uint64 `json:"address"`
}

type Output struct {
	Binary         string       `json:"binary"`
	HasSymtab      bool         `json:"has_symtab"`
	TextStart      uint64       `json:"text_start"`
	BuildInfo      *BuildInfo   `json:"buildinfo,omitempty"`
	BuildInfoError string       `json:"buildinfo_error,omitempty"`
	Functions      []Function   `json:"functions"`
	DwarfError     string       `json:"dwarf_error,omitempty"`
	Params         []FuncParams `json:"params"`
	Structs        []Struct     `json:"structs"`
	Itabs          []Itab       `json:"itabs"`
	Units          []Unit       `json:"units,omitempty"`
}

type Unit struct {
	Name   string      `json:"name"`
	Ranges [][2]uint64 `json:"ranges"`
	Error  string      `json:"error,omitempty"`
}

// x86-64 DWARF register numbers (System V psABI, table 3.36).
var x86Regs = []string{"RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP",
	"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "RIP",
	"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14", "X15"}

func regName(n uint64) string {
	if n < uint64(len(x86Regs)) {
		return x86Regs[n]
	}
	return fmt.Sprintf("DW_REG%d", n)
}

const attrGoEmbeddedField dwarf.Attr = 0x2903

func main() {
	var funcs, structs listFlag
	flag.Var(&funcs, "func", "Go function symbol name (repeatable)")
	flag.Var(&structs, "struct", "Go struct type name (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gotruth [-func NAME]... [-struct TYPENAME]... BINARY")
		os.Exit(2)
	}
	path := flag.Arg(0)
	out, err := inspect(path, funcs, structs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotruth:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "gotruth:", err)
		os.Exit(1)
	}
}

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

func inspect(path string, funcs, structs []string) (*Output, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &Output{Binary: path, Functions: []Function{}, Params: []FuncParams{}, Structs: []Struct{}, Itabs: []Itab{}}
	if text := f.Section(".text"); text != nil {
		out.TextStart = text.Addr
	}

	if bi, err := buildinfo.ReadFile(path); err != nil {
		out.BuildInfoError = err.Error()
	} else {
		out.BuildInfo = convertBuildInfo(bi)
	}

	syms, symErr := f.Symbols()
	out.HasSymtab = symErr == nil && len(syms) > 0
	symByName := map[string]elf.Symbol{}
	for _, s := range syms {
		if _, dup := symByName[s.Name]; !dup {
			symByName[s.Name] = s
		}
		if (strings.HasPrefix(s.Name, "go:itab.") || strings.HasPrefix(s.Name, "go.itab.")) && strings.HasSuffix(s.Name, ",net.Conn") {
			out.Itabs = append(out.Itabs, Itab{Name: s.Name, Address: s.Value})
		}
	}
	sort.Slice(out.Itabs, func(i, j int) bool { return out.Itabs[i].Name < out.Itabs[j].Name })

	var table *gosym.Table
	if pcln := f.Section(".gopclntab"); pcln != nil {
		if data, err := pcln.Data(); err == nil {
			// Go 1.26 leaves pclntab's textStart zero and debug/gosym (1.18+) uses the address it is given.
			// Like cmd/internal/objfile: runtime.text when the symbol table has it (externally linked
			// binaries put C code before it in .text), else the .text section.
			textStart := out.TextStart
			if s, ok := symByName["runtime.text"]; ok {
				textStart = s.Value
			}
			table, _ = gosym.NewTable(nil, gosym.NewLineTable(data, textStart))
		}
	}

	for _, name := range funcs {
		fn := Function{Name: name}
		if s, ok := symByName[name]; ok && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			fn.SymtabEntry = u64(s.Value)
		}
		if table != nil {
			if gf := table.LookupFunc(name); gf != nil {
				fn.PclntabEntry = u64(gf.Entry)
			}
		}
		if fn.SymtabEntry != nil {
			fn.Entry, fn.Source = fn.SymtabEntry, "symtab"
		} else if fn.PclntabEntry != nil {
			fn.Entry, fn.Source = fn.PclntabEntry, "pclntab"
		}
		if fn.Entry != nil {
			fn.Found = true
			if off, ok := fileOffset(f, *fn.Entry); ok {
				fn.FileOffset = u64(off)
			}
		}
		out.Functions = append(out.Functions, fn)
	}

	d, err := f.DWARF()
	if err != nil {
		out.DwarfError = err.Error()
		return out, nil
	}
	r := &dwarfReader{f: f, d: d}
	if err := r.load(); err != nil {
		out.DwarfError = err.Error()
		return out, nil
	}
	for _, name := range funcs {
		out.Params = append(out.Params, r.params(name))
	}
	for _, name := range structs {
		out.Structs = append(out.Structs, r.structure(name))
	}
	out.Units = units(d)
	return out, nil
}

func units(d *dwarf.Data) []Unit {
	out := []Unit{}
	rd := d.Reader()
	for {
		e, err := rd.Next()
		if err != nil || e == nil {
			return out
		}
		if e.Tag == dwarf.TagCompileUnit {
			u := Unit{Ranges: [][2]uint64{}}
			u.Name, _ = e.Val(dwarf.AttrName).(string)
			if r, err := d.Ranges(e); err != nil {
				u.Error = err.Error()
			} else if r != nil {
				u.Ranges = r
			}
			out = append(out, u)
		}
		rd.SkipChildren()
	}
}

func convertModule(m *debug.Module) *Module {
	if m == nil {
		return nil
	}
	return &Module{Path: m.Path, Version: m.Version, Sum: m.Sum, Replace: convertModule(m.Replace)}
}

func convertBuildInfo(bi *debug.BuildInfo) *BuildInfo {
	out := &BuildInfo{GoVersion: bi.GoVersion, Path: bi.Path, Main: convertModule(&bi.Main), Deps: []*Module{}, Settings: []Setting{}}
	for _, d := range bi.Deps {
		out.Deps = append(out.Deps, convertModule(d))
	}
	for _, s := range bi.Settings {
		out.Settings = append(out.Settings, Setting{Key: s.Key, Value: s.Value})
	}
	return out
}

// fileOffset maps a virtual address to its file offset through the PT_LOAD segment holding it.
func fileOffset(f *elf.File, addr uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// sectionData returns the bytes of .debug_NAME or .zdebug_NAME (Go < 1.19); debug/elf's Section.Data
// inflates both SHF_COMPRESSED sections and the "ZLIB"-framed .zdebug_ ones.
func sectionData(f *elf.File, name string) ([]byte, error) {
	for _, n := range []string{".debug_" + name, ".zdebug_" + name} {
		if s := f.Section(n); s != nil {
			return s.Data()
		}
	}
	return nil, nil
}

type cuInfo struct {
	version    int
	lowPC      uint64
	addrBase   int64
	locBase    int64
	hasLocBase bool
}

type dwarfReader struct {
	f        *elf.File
	d        *dwarf.Data
	loc      []byte
	loclists []byte
	addr     []byte
	subs     map[string][]dwarf.Offset // name -> subprogram DIE offsets (abstract or concrete)
	concrete map[dwarf.Offset]dwarf.Offset
	cuOf     map[dwarf.Offset]*cuInfo
	structs  map[string]dwarf.Offset
	allSubs  []subEntry
}

type subEntry struct {
	off    dwarf.Offset
	name   string
	origin dwarf.Offset
	hasPC  bool
	cu     *cuInfo
}

func (r *dwarfReader) load() error {
	var err error
	if r.loc, err = sectionData(r.f, "loc"); err != nil {
		return err
	}
	if r.loclists, err = sectionData(r.f, "loclists"); err != nil {
		return err
	}
	if r.addr, err = sectionData(r.f, "addr"); err != nil {
		return err
	}
	r.subs = map[string][]dwarf.Offset{}
	r.structs = map[string]dwarf.Offset{}
	r.cuOf = map[dwarf.Offset]*cuInfo{}
	rd := r.d.Reader()
	var cu *cuInfo
	names := map[dwarf.Offset]string{}
	for {
		e, err := rd.Next()
		if err != nil {
			return err
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			cu = &cuInfo{version: 4}
			if v, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
				cu.lowPC = v
			}
			if v, ok := e.Val(dwarf.AttrAddrBase).(int64); ok {
				cu.addrBase = v
				cu.version = 5
			}
			if v, ok := e.Val(dwarf.AttrLoclistsBase).(int64); ok {
				cu.locBase, cu.hasLocBase = v, true
			}
		case dwarf.TagSubprogram:
			name, _ := e.Val(dwarf.AttrName).(string)
			origin, _ := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			_, hasPC := e.Val(dwarf.AttrLowpc).(uint64)
			if name != "" {
				names[e.Offset] = name
			}
			r.allSubs = append(r.allSubs, subEntry{off: e.Offset, name: name, origin: origin, hasPC: hasPC, cu: cu})
		case dwarf.TagStructType:
			if name, ok := e.Val(dwarf.AttrName).(string); ok {
				if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); !decl {
					if _, dup := r.structs[name]; !dup {
						r.structs[name] = e.Offset
					}
				}
			}
		}
	}
	for _, s := range r.allSubs {
		name := s.name
		if name == "" && s.origin != 0 {
			name = names[s.origin]
		}
		if name != "" && s.hasPC {
			r.subs[name] = append(r.subs[name], s.off)
			r.cuOf[s.off] = s.cu
		}
	}
	return nil
}

func (r *dwarfReader) entryAt(off dwarf.Offset) (*dwarf.Entry, *dwarf.Reader, error) {
	rd := r.d.Reader()
	rd.Seek(off)
	e, err := rd.Next()
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		return nil, nil, errors.New("no entry")
	}
	return e, rd, nil
}

// typeInfo returns the DW_AT_name of the type DIE and the size debug/dwarf computes for it.
func (r *dwarfReader) typeInfo(off dwarf.Offset) (string, int64) {
	e, _, err := r.entryAt(off)
	if err != nil {
		return "", -1
	}
	name, _ := e.Val(dwarf.AttrName).(string)
	t, err := r.d.Type(off)
	if err != nil {
		return name, -1
	}
	return name, t.Size()
}

func (r *dwarfReader) params(name string) FuncParams {
	fp := FuncParams{Func: name, Params: []Param{}}
	offs := r.subs[name]
	if len(offs) == 0 {
		return fp
	}
	fp.Found = true
	off := offs[0]
	cu := r.cuOf[off]
	e, rd, err := r.entryAt(off)
	if err != nil {
		fp.Error = err.Error()
		return fp
	}
	lowPC, _ := e.Val(dwarf.AttrLowpc).(uint64)
	fp.LowPC = lowPC
	sawReg, sawStack := false, false
	if e.Children {
		depth := 0
		for {
			c, err := rd.Next()
			if err != nil {
				fp.Error = err.Error()
				return fp
			}
			if c == nil {
				break
			}
			if c.Tag == 0 {
				if depth == 0 {
					break
				}
				depth--
				continue
			}
			if depth == 0 && c.Tag == dwarf.TagFormalParameter {
				p, err := r.param(c, cu, lowPC)
				if err != nil {
					fp.Error = err.Error()
					return fp
				}
				for _, pc := range p.Pieces {
					if pc.Kind == "register" {
						sawReg = true
					} else if pc.Kind == "stack" {
						sawStack = true
					}
				}
				fp.Params = append(fp.Params, p)
			}
			if c.Children {
				depth++
			}
		}
	}
	switch {
	case sawReg:
		fp.ABI = "register"
	case sawStack:
		fp.ABI = "stack"
	default:
		fp.ABI = "none"
	}
	return fp
}

func (r *dwarfReader) param(c *dwarf.Entry, cu *cuInfo, pc uint64) (Param, error) {
	p := Param{Pieces: []Piece{}, Location: "none"}
	attrs := c
	if origin, ok := c.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
		if oe, _, err := r.entryAt(origin); err == nil {
			attrs = oe
		}
	}
	p.Name, _ = attrs.Val(dwarf.AttrName).(string)
	p.IsReturn, _ = attrs.Val(dwarf.AttrVarParam).(bool)
	if t, ok := attrs.Val(dwarf.AttrType).(dwarf.Offset); ok {
		p.Type, p.Size = r.typeInfo(t)
	}
	f := c.AttrField(dwarf.AttrLocation)
	if f == nil {
		return p, nil
	}
	var expr []byte
	switch f.Class {
	case dwarf.ClassExprLoc, dwarf.ClassBlock:
		expr = f.Val.([]byte)
		p.Location = "expr"
	case dwarf.ClassLocListPtr, dwarf.ClassLocList:
		p.Location = "list"
		var err error
		expr, err = r.lookupLoc(f, cu, pc)
		if err != nil {
			return p, err
		}
	default:
		return p, fmt.Errorf("unexpected location class %v", f.Class)
	}
	if expr == nil {
		return p, nil
	}
	pieces, err := decodeExpr(expr, p.Size)
	if err != nil {
		return p, err
	}
	p.Pieces = pieces
	return p, nil
}

type cursor struct {
	b   []byte
	pos int
	err error
}

func (c *cursor) u8() byte {
	if c.pos >= len(c.b) {
		c.err = io.ErrUnexpectedEOF
		return 0
	}
	v := c.b[c.pos]
	c.pos++
	return v
}
func (c *cursor) u16() uint64 { a := uint64(c.u8()); return a | uint64(c.u8())<<8 }
func (c *cursor) u32() uint64 { a := c.u16(); return a | c.u16()<<16 }
func (c *cursor) u64() uint64 { a := c.u32(); return a | c.u32()<<32 }
func (c *cursor) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		b := c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			return v
		}
	}
}
func (c *cursor) sleb() int64 {
	var v int64
	var shift uint
	var b byte
	for {
		b = c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			break
		}
	}
	if shift < 64 && b&0x40 != 0 {
		v |= -1 << shift
	}
	return v
}
func (c *cursor) bytes(n uint64) []byte {
	if uint64(len(c.b)-c.pos) < n {
		c.err = io.ErrUnexpectedEOF
		return nil
	}
	v := c.b[c.pos : c.pos+int(n)]
	c.pos += int(n)
	return v
}

func (r *dwarfReader) addrx(cu *cuInfo, idx uint64) (uint64, error) {
	off := uint64(cu.addrBase) + idx*8
	if off+8 > uint64(len(r.addr)) {
		return 0, fmt.Errorf("debug_addr index %d out of range", idx)
	}
	return binary.LittleEndian.Uint64(r.addr[off:]), nil
}

// lookupLoc returns the location expression in effect at pc, or nil if none covers it.
func (r *dwarfReader) lookupLoc(f *dwarf.Field, cu *cuInfo, pc uint64) ([]byte, error) {
	val, _ := f.Val.(int64)
	// Go writes either .debug_loc (DWARF 4, Go < 1.25) or .debug_loclists (DWARF 5), never both.
	if r.loclists != nil && cu != nil && (r.loc == nil || cu.version == 5) {
		off := uint64(val)
		if f.Class == dwarf.ClassLocList { // DW_FORM_loclistx: index into the offsets table after loclists_base
			c := &cursor{b: r.loclists, pos: int(cu.locBase) + int(val)*4}
			off = uint64(cu.locBase) + c.u32()
			if c.err != nil {
				return nil, c.err
			}
		}
		c := &cursor{b: r.loclists, pos: int(off)}
		base := cu.lowPC
		for {
			kind := c.u8()
			if c.err != nil {
				return nil, c.err
			}
			var lo, hi uint64
			var err error
			switch kind {
			case 0x00: // DW_LLE_end_of_list
				return nil, nil
			case 0x01: // base_addressx
				if base, err = r.addrx(cu, c.uleb()); err != nil {
					return nil, err
				}
				continue
			case 0x02: // startx_endx
				if lo, err = r.addrx(cu, c.uleb()); err != nil {
					return nil, err
				}
				if hi, err = r.addrx(cu, c.uleb()); err != nil {
					return nil, err
				}
			case 0x03: // startx_length
				if lo, err = r.addrx(cu, c.uleb()); err != nil {
					return nil, err
				}
				hi = lo + c.uleb()
			case 0x04: // offset_pair
				lo = base + c.uleb()
				hi = base + c.uleb()
			case 0x05: // default_location
				lo, hi = 0, ^uint64(0)
			case 0x06: // base_address
				base = c.u64()
				continue
			case 0x07: // start_end
				lo = c.u64()
				hi = c.u64()
			case 0x08: // start_length
				lo = c.u64()
				hi = lo + c.uleb()
			default:
				return nil, fmt.Errorf("unknown DW_LLE 0x%x", kind)
			}
			expr := c.bytes(c.uleb())
			if c.err != nil {
				return nil, c.err
			}
			if pc >= lo && pc < hi {
				return expr, nil
			}
		}
	}
	// DWARF 4 .debug_loc
	c := &cursor{b: r.loc, pos: int(val)}
	base := uint64(0)
	if cu != nil {
		base = cu.lowPC
	}
	for {
		lo, hi := c.u64(), c.u64()
		if c.err != nil {
			return nil, c.err
		}
		if lo == 0 && hi == 0 {
			return nil, nil
		}
		if lo == ^uint64(0) {
			base = hi
			continue
		}
		expr := c.bytes(c.u16())
		if c.err != nil {
			return nil, c.err
		}
		if pc >= base+lo && pc < base+hi {
			return expr, nil
		}
	}
}

// decodeExpr turns a Go location expression into pieces. Go emits DW_OP_regN / DW_OP_regx,
// DW_OP_call_frame_cfa, DW_OP_fbreg (frame base = DW_OP_call_frame_cfa) and DW_OP_piece.
func decodeExpr(expr []byte, typeSize int64) ([]Piece, error) {
	c := &cursor{b: expr}
	var pieces []Piece
	var cur *Piece
	sawPiece := false
	for c.pos < len(expr) {
		op := c.u8()
		switch {
		case op >= 0x50 && op <= 0x6f: // DW_OP_reg0..31
			n := uint64(op - 0x50)
			cur = &Piece{Kind: "register", Register: regName(n), DwarfReg: u64(n)}
		case op == 0x90: // DW_OP_regx
			n := c.uleb()
			cur = &Piece{Kind: "register", Register: regName(n), DwarfReg: u64(n)}
		case op == 0x9c: // DW_OP_call_frame_cfa
			cur = &Piece{Kind: "stack", CfaOffset: i64(0), StackOffset: i64(8)}
			// optional DW_OP_consts k DW_OP_plus (older compilers)
			if c.pos+1 < len(expr) && expr[c.pos] == 0x11 {
				save := c.pos
				c.u8()
				k := c.sleb()
				if c.pos < len(expr) && expr[c.pos] == 0x22 {
					c.u8()
					cur.CfaOffset, cur.StackOffset = i64(k), i64(k+8)
				} else {
					c.pos = save
				}
			}
		case op == 0x91: // DW_OP_fbreg
			k := c.sleb()
			cur = &Piece{Kind: "stack", CfaOffset: i64(k), StackOffset: i64(k + 8)}
		case op == 0x93: // DW_OP_piece
			sz := c.uleb()
			sawPiece = true
			if cur == nil {
				cur = &Piece{Kind: "empty"}
			}
			cur.Size = int64(sz)
			pieces = append(pieces, *cur)
			cur = nil
		default:
			return nil, fmt.Errorf("unsupported DW_OP 0x%x in %x", op, expr)
		}
		if c.err != nil {
			return nil, c.err
		}
	}
	if cur != nil {
		if sawPiece {
			return nil, fmt.Errorf("trailing location without DW_OP_piece in %x", expr)
		}
		cur.Size = typeSize
		pieces = append(pieces, *cur)
	}
	if pieces == nil {
		pieces = []Piece{}
	}
	return pieces, nil
}

func (r *dwarfReader) structure(name string) Struct {
	s := Struct{Name: name, Members: []Member{}}
	off, ok := r.structs[name]
	if !ok {
		return s
	}
	s.Found = true
	e, rd, err := r.entryAt(off)
	if err != nil {
		return s
	}
	if v, ok := e.Val(dwarf.AttrByteSize).(int64); ok {
		s.Size = v
	}
	if !e.Children {
		return s
	}
	for {
		c, err := rd.Next()
		if err != nil || c == nil || c.Tag == 0 {
			break
		}
		if c.Tag == dwarf.TagMember {
			m := Member{}
			m.Name, _ = c.Val(dwarf.AttrName).(string)
			m.Offset, _ = c.Val(dwarf.AttrDataMemberLoc).(int64)
			m.Embedded, _ = c.Val(attrGoEmbeddedField).(bool)
			if t, ok := c.Val(dwarf.AttrType).(dwarf.Offset); ok {
				m.Type, m.Size = r.typeInfo(t)
			}
			s.Members = append(s.Members, m)
		}
		if c.Children {
			rd.SkipChildren()
		}
	}
	return s
}

module gospan.io/offsets/gotruth

go 1.21

module gofsck

go 1.26.8

module github.com/arcadego/arcadego

go 1.26

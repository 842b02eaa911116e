module warm

go 1.18

module rechazard

go 1.19

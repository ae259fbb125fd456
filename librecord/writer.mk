# librecord writer sources: librecord_librecord_la_SOURCES += ...
librecord_librecord_la_SOURCES += \
	librecord/crc32c.c librecord/crc32c.h \
	librecord/error.c \
	librecord/encode.h librecord/internal.h \
	librecord/pool.c librecord/stream.c librecord/writer.c librecord/seal.c \
	librecord/reemit.c
# generated from schemas/events.json (schemas/Makefile.inc)
nodist_librecord_librecord_la_SOURCES = librecord/events.c
nodist_recinclude_HEADERS = librecord/rec/events.h librecord/rec/version.h
# the generated header must exist before any librecord object is compiled,
# even when a target is built directly (BUILT_SOURCES covers all/check only)
$(librecord_librecord_la_OBJECTS): librecord/rec/events.h

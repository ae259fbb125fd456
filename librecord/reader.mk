# librecord reader: file walking, metadata, pools, values (read side only).
librecord_librecord_la_SOURCES += \
	librecord/reader.c \
	librecord/spool.c \
	librecord/dir.c \
	librecord/copy.c \
	librecord/relay.c \
	librecord/follow.c \
	librecord/block.c \
	librecord/fields.h \
	librecord/reader_int.h \
	librecord/metadata.c \
	librecord/rpool.c \
	librecord/value.c \
	librecord/cbordec.c \
	librecord/cbordec.h

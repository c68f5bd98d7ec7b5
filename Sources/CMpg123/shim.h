#ifndef QUEUEPLAYER_CMPG123_SHIM_H
#define QUEUEPLAYER_CMPG123_SHIM_H
// libmpg123 for Swift. The header picks 64-bit off_t names on this platform; Swift calls the
// `...2` forms (mpg123_param2, mpg123_info2) because the plain names are macros.
#include <mpg123.h>
#endif

#ifndef QUEUEPLAYER_CXML2_SHIM_H
#define QUEUEPLAYER_CXML2_SHIM_H
// libxml2's streaming reader, for podcast feeds (RSS and Atom).
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU, and its encoding header then brings ICU's own headers, whose declarations clash
// with the ICU that Foundation carries. Nothing here touches the structures that differ without them: the reader
// is used through its opaque pointer alone.
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>

// libxml2's deallocator is a global function pointer, which Swift 6 sees as shared mutable state.
static inline void queueplayer_xml_free(void *pointer) { xmlFree(pointer); }
#endif

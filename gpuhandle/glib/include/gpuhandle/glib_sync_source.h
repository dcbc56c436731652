// glib_sync_source.h (placeholder until written)
#pragma once

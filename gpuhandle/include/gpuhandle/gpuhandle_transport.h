/* C API: frames with their fences between processes over a Unix socket (see frame_transport.h). */
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/gpuhandle_error.h>
#include <gpuhandle/gpuhandle_frame.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The producer side: listens on a socket path and sends each frame to every consumer with room.
 * Owned by its creator (not refcounted); every call from any thread. */
typedef struct gpuhandle_frame_sender gpuhandle_frame_sender;
/* The consumer side: connected to one sender. Owned; receive from one thread at a time. */
typedef struct gpuhandle_frame_receiver gpuhandle_frame_receiver;

/* Zero means the default for every numeric field. */
typedef struct gpuhandle_frame_sender_options {
	const char *socket_path;    /* non-null; an existing socket file there is replaced */
	uint32_t socket_mode;       /* file mode of the socket; 0: 0600 (owner only) */
	uint32_t max_peers;         /* consumers at once, 1..64; 0: 8 */
	uint32_t max_in_flight;     /* frames one consumer may hold, 1..1024; 0: 4 */
	const char *caps;           /* nullable: sent to each consumer on connect */
	const uint32_t *allow_uids; /* uids allowed besides this process's own; nullable */
	/* entries of allow_uids (ignored when it is NULL) */
	size_t num_allow_uids;
	bool any_user; /* no uid check (the socket mode still applies) */
} gpuhandle_frame_sender_options;

/* The sender's counters since it was made (gpuhandle_frame_sender_get_stats). */
typedef struct gpuhandle_frame_sender_stats {
	uint64_t frames_sent;     /* frame messages sent (one per consumer that got a frame) */
	uint64_t frames_skipped;  /* a consumer was at its in-flight bound (or its socket full) */
	uint64_t releases;        /* release messages accepted from consumers */
	uint64_t peers_accepted;  /* consumers let in (uid checked, hello sent) */
	uint64_t peers_refused;   /* refused by the uid check or max_peers */
	uint64_t peers_lost;      /* disconnected or crashed; their frames were released */
	uint64_t bad_messages;    /* refused messages from consumers */
	uint32_t peers_connected; /* consumers connected now */
	uint32_t peers_with_room; /* connected consumers below their in-flight bound */
} gpuhandle_frame_sender_stats;

/* options: non-null, borrowed; *out: a new sender or NULL; error: nullable. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_sender_new(
	const gpuhandle_frame_sender_options *options, gpuhandle_frame_sender **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Says bye to every consumer, closes the socket and removes its file. Nullable (no-op). */
GPUHANDLE_API void gpuhandle_frame_sender_free(gpuhandle_frame_sender *sender) GPUHANDLE_NOEXCEPT;
/* Sends frame (fd-backed resources: DMA-BUF, shared-memory or Vulkan memory fds; a NOOP or fence-fd
 * acquire point) to every consumer with room; its release gate, if any, is signalled once they
 * are done. delivered: nullable; receives how many consumers got it. NOT_SUPPORTED names what
 * cannot cross. */
GPUHANDLE_API gpuhandle_status
gpuhandle_frame_sender_send(gpuhandle_frame_sender *sender, const gpuhandle_frame *frame,
			    uint32_t *delivered, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* As gpuhandle_frame_sender_send, with `size` bytes of the application's that travel with the
 * frame (at most 4068; attachment nullable when size is 0): the consumer reads them with
 * gpuhandle_frame_receiver_get_attachment. INVALID_ARGUMENT ("attachment") when longer. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_sender_send_with_attachment(
	gpuhandle_frame_sender *sender, const gpuhandle_frame *frame, const void *attachment,
	size_t size, uint32_t *delivered, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* caps: non-null; sent to every consumer now and to later ones on connect. */
GPUHANDLE_API gpuhandle_status
gpuhandle_frame_sender_set_caps(gpuhandle_frame_sender *sender, const char *caps,
				gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Ends the stream (GStreamer's EOS) at every connected consumer, after the frames already sent:
 * their next receive gives NULL once, and the connection stays for the frames of a next stream.
 * told: nullable; receives how many consumers were told. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_sender_end_stream(
	gpuhandle_frame_sender *sender, uint32_t *told, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Blocks until `count` consumers are connected or timeout_ns passes (TIMEOUT). */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_sender_wait_for_peers(
	gpuhandle_frame_sender *sender, uint32_t count, uint64_t timeout_ns,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* sender, out: non-null (otherwise *out, when non-null, is zeroed). */
GPUHANDLE_API void
gpuhandle_frame_sender_get_stats(const gpuhandle_frame_sender *sender,
				 gpuhandle_frame_sender_stats *out) GPUHANDLE_NOEXCEPT;

/* What the wire's file cache did (a struct of its own: the stats structs keep their layout). */
typedef struct gpuhandle_frame_transport_file_stats {
	uint64_t files_remembered; /* files sent once to be kept (sender: to every consumer) */
	uint64_t frames_over_kept_files; /* frame messages that named a kept file, not its fd */
	uint32_t files_held;             /* receiver: the files it keeps now; sender: 0 */
} gpuhandle_frame_transport_file_stats;

/* sender, out: non-null (otherwise *out, when non-null, is zeroed). */
GPUHANDLE_API void
gpuhandle_frame_sender_get_file_stats(const gpuhandle_frame_sender *sender,
				      gpuhandle_frame_transport_file_stats *out) GPUHANDLE_NOEXCEPT;

/* Where the sender listens and which uids it may run as. */
typedef struct gpuhandle_frame_receiver_options {
	const char *socket_path;     /* non-null */
	uint64_t connect_timeout_ns; /* 0: 5 s */
	const uint32_t *allow_uids;  /* uids the sender may run as besides our own; nullable */
	size_t num_allow_uids;       /* entries of allow_uids (ignored when it is NULL) */
	bool any_user;               /* no uid check of the sender */
} gpuhandle_frame_receiver_options;

/* The receiver's counters since connect (gpuhandle_frame_receiver_get_stats). */
typedef struct gpuhandle_frame_receiver_stats {
	uint64_t frames_received; /* frame messages received */
	uint64_t releases_sent;   /* release messages sent back to the sender */
	uint64_t bad_messages;    /* refused messages from the sender (logged, skipped) */
} gpuhandle_frame_receiver_stats;

/* Connects within connect_timeout_ns (TIMEOUT) and reads the sender's hello. options: non-null;
 * *out: a new receiver or NULL. The receiver keeps up to 32 of the sender's shared-memory files
 * (the wire's file cache, docs/transport.md): a pooled memfd crosses once, then frames name it. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_receiver_connect(
	const gpuhandle_frame_receiver_options *options, gpuhandle_frame_receiver **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* As gpuhandle_frame_receiver_connect, keeping at most cached_files of the sender's files: 0 keeps
 * none (every fd crosses with its frame), 32 is the most (OUT_OF_RANGE, field "cachedFiles",
 * above). */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_receiver_connect_with_file_cache(
	const gpuhandle_frame_receiver_options *options, uint32_t cached_files,
	gpuhandle_frame_receiver **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Nullable (no-op). Frames received earlier stay valid. */
GPUHANDLE_API void
gpuhandle_frame_receiver_free(gpuhandle_frame_receiver *receiver) GPUHANDLE_NOEXCEPT;
/* *out: the next frame (a new reference), or NULL with GPUHANDLE_OK at the end of a stream: the
 * sender ended it (gpuhandle_frame_sender_end_stream; the next call waits for a next stream) or
 * said bye (every later call gives NULL). TIMEOUT when none came in time; IO when the sender went
 * away without ending the stream. Signal the frame's release gate (gpuhandle_frame_get_release)
 * when done reading it. */
GPUHANDLE_API gpuhandle_status
gpuhandle_frame_receiver_receive(gpuhandle_frame_receiver *receiver, uint64_t timeout_ns,
				 gpuhandle_frame **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Copies the current caps, NUL-terminated and truncated to size, into buffer (nullable when size
 * is 0); returns the caps' full length, as snprintf does. receiver NULL gives 0. */
GPUHANDLE_API size_t gpuhandle_frame_receiver_get_caps(const gpuhandle_frame_receiver *receiver,
						       char *buffer,
						       size_t size) GPUHANDLE_NOEXCEPT;
/* receiver, out: non-null (otherwise *out, when non-null, is zeroed). */
GPUHANDLE_API void
gpuhandle_frame_receiver_get_stats(const gpuhandle_frame_receiver *receiver,
				   gpuhandle_frame_receiver_stats *out) GPUHANDLE_NOEXCEPT;
/* receiver, out: non-null (otherwise *out, when non-null, is zeroed). */
GPUHANDLE_API void gpuhandle_frame_receiver_get_file_stats(
	const gpuhandle_frame_receiver *receiver,
	gpuhandle_frame_transport_file_stats *out) GPUHANDLE_NOEXCEPT;
/* The attachment of the frame the last receive returned (valid until the next receive): copies
 * up to size bytes of it into buffer (nullable when size is 0) and returns its full length (0:
 * the frame came without one, or receiver is NULL). */
GPUHANDLE_API size_t gpuhandle_frame_receiver_get_attachment(
	const gpuhandle_frame_receiver *receiver, void *buffer, size_t size) GPUHANDLE_NOEXCEPT;

#ifdef __cplusplus
}
#endif

/* The C API's frame transport: a C producer and a C consumer process (with the wire's file cache
 * and without), and bad arguments. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capi_helpers.h"

#define FRAMES 20
#define SECOND 1000000000ull

static void socket_path(char *path, size_t size)
{
	snprintf(path, size, "/tmp/gpuhandle-capi-transport-%d.sock", (int)getpid());
}

/* The consumer process: FRAMES frames stamped 0, 1, ... in their first byte, then the end. With
 * `keep_files` it connects as gpuhandle_frame_receiver_connect does (a 32-file cache): the one
 * memfd crosses once and every frame names it; without, it keeps none and every frame brings it. */
static int consume(const char *path, int keep_files)
{
	gpuhandle_frame_receiver_options options;
	memset(&options, 0, sizeof options);
	options.socket_path = path;
	gpuhandle_frame_receiver *receiver = NULL;
	if ((keep_files ? gpuhandle_frame_receiver_connect(&options, &receiver, NULL)
			: gpuhandle_frame_receiver_connect_with_file_cache(&options, 0, &receiver,
									   NULL)) != GPUHANDLE_OK)
		return 2;
	char caps[64];
	if (gpuhandle_frame_receiver_get_caps(receiver, caps, sizeof caps) != 11 ||
	    strcmp(caps, "video/x-raw") != 0)
		return 3;
	for (int i = 0; i < FRAMES; i++) {
		gpuhandle_frame *frame = NULL;
		if (gpuhandle_frame_receiver_receive(receiver, 5 * SECOND, &frame, NULL) !=
			    GPUHANDLE_OK ||
		    !frame || gpuhandle_frame_get_width(frame) != W)
			return 4;
		gpuhandle_shm_fd_desc shm;
		if (gpuhandle_resource_get_shm_fd(gpuhandle_frame_get_resource(frame, 0), &shm) !=
		    GPUHANDLE_OK)
			return 5;
		unsigned char *bytes = mmap(NULL, shm.size, PROT_READ, MAP_SHARED, shm.fd, 0);
		const int stamped = bytes != MAP_FAILED && bytes[0] == i;
		if (bytes != MAP_FAILED)
			munmap(bytes, shm.size);
		/* Odd frames come with "frame <i>" attached, even ones without. */
		char attached[32] = { 0 }, expected[32] = { 0 };
		if (i % 2)
			snprintf(expected, sizeof expected, "frame %d", i);
		const size_t length = gpuhandle_frame_receiver_get_attachment(receiver, attached,
									      sizeof attached);
		if (length != strlen(expected) || memcmp(attached, expected, length) != 0 ||
		    gpuhandle_frame_receiver_get_attachment(receiver, NULL, 0) != length)
			return 9;
		gpuhandle_release_gate *gate = NULL;
		if (!stamped || gpuhandle_frame_get_release(frame, &gate, NULL) != GPUHANDLE_OK ||
		    !gate || gpuhandle_release_gate_signal(gate, NULL, NULL) != GPUHANDLE_OK)
			return 6;
		gpuhandle_release_gate_unref(gate);
		gpuhandle_frame_unref(frame);
	}
	gpuhandle_frame_transport_file_stats files;
	memset(&files, 0xff, sizeof files);
	gpuhandle_frame_receiver_get_file_stats(receiver, &files);
	/* Frame 0 may cross before the producer has read which files this consumer keeps. */
	if (keep_files ? files.files_remembered != 1 || files.frames_over_kept_files < FRAMES - 1 ||
				 files.frames_over_kept_files > FRAMES || files.files_held != 1
		       : files.files_remembered != 0 || files.frames_over_kept_files != 0 ||
				 files.files_held != 0)
		return 10;
	/* The producer ends the stream, then says bye: NULL for each. */
	for (int i = 0; i < 2; i++) {
		gpuhandle_frame *end = SENTINEL;
		if (gpuhandle_frame_receiver_receive(receiver, 5 * SECOND, &end, NULL) !=
			    GPUHANDLE_OK ||
		    end)
			return 7;
	}
	gpuhandle_frame_receiver_stats stats;
	gpuhandle_frame_receiver_get_stats(receiver, &stats);
	gpuhandle_frame_receiver_free(receiver);
	return stats.frames_received == FRAMES ? 0 : 8;
}

/* _i: 0, the consumer keeps the producer's files; 1, it keeps none. */
START_TEST(frames_cross_from_a_c_producer_to_a_c_consumer)
{
	const int keep_files = _i == 0;
	char path[108];
	socket_path(path, sizeof path);
	const pid_t child = fork();
	if (child == 0)
		_exit(consume(path, keep_files));
	const int fds_before = open_fd_count();
	gpuhandle_frame_sender_options options;
	memset(&options, 0, sizeof options);
	options.socket_path = path;
	options.caps = "video/x-raw";
	gpuhandle_frame_sender *sender = NULL;
	ck_assert_int_eq(gpuhandle_frame_sender_new(&options, &sender, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_frame_sender_wait_for_peers(sender, 1, 10 * SECOND, NULL),
			 GPUHANDLE_OK);

	/* Sealed against shrinking, as shared memory must be to cross processes. */
	const int fd = make_memfd(NV12_SIZE);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	unsigned char *bytes = mmap(NULL, NV12_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(bytes, MAP_FAILED);
	gpuhandle_shm_fd_desc shm;
	memset(&shm, 0, sizeof shm);
	shm.fd = fd;
	shm.size = NV12_SIZE;
	gpuhandle_resource *resource = NULL;
	ck_assert_new_ok(gpuhandle_resource_new_shm_fd, shm, GPUHANDLE_RESOURCE_KIND_SHM_FD,
			 resource);
	gpuhandle_frame_desc d;
	memset(&d, 0, sizeof d);
	d.format = 1; /* NV12 */
	d.width = W;
	d.height = H;
	d.colorimetry = bt709;
	d.numResources = 1;
	d.resources[0] = resource;
	d.numPlanes = 2;
	d.planes[0].stride = W;
	d.planes[1].offset = W * H;
	d.planes[1].stride = W;
	gpuhandle_frame *frame = NULL;
	ck_assert_int_eq(gpuhandle_frame_new(&d, &frame, NULL), GPUHANDLE_OK);
	for (int i = 0; i < FRAMES; i++) {
		/* One gate per use of the memory: written again only once the consumer let go. */
		gpuhandle_release_gate *gate = NULL;
		gpuhandle_frame *sent = NULL;
		ck_assert_int_eq(gpuhandle_release_gate_new(&gate, NULL), GPUHANDLE_OK);
		ck_assert_int_eq(gpuhandle_frame_with_sync(frame, NULL, gate, &sent, NULL),
				 GPUHANDLE_OK);
		bytes[0] = (unsigned char)i;
		uint32_t delivered = 0;
		if (i % 2) {
			char attachment[32];
			const int length = snprintf(attachment, sizeof attachment, "frame %d", i);
			ck_assert_int_eq(gpuhandle_frame_sender_send_with_attachment(
						 sender, sent, attachment, (size_t)length,
						 &delivered, NULL),
					 GPUHANDLE_OK);
		} else {
			ck_assert_int_eq(gpuhandle_frame_sender_send(sender, sent, &delivered,
								     NULL),
					 GPUHANDLE_OK);
		}
		ck_assert_uint_eq(delivered, 1);
		gpuhandle_sync_point *released = NULL;
		ck_assert_int_eq(gpuhandle_release_gate_get_released(gate, &released, NULL),
				 GPUHANDLE_OK);
		ck_assert_int_eq(gpuhandle_sync_point_wait(released, 5 * (int64_t)SECOND, NULL),
				 GPUHANDLE_OK);
		gpuhandle_sync_point_unref(released);
		gpuhandle_frame_unref(sent);
		gpuhandle_release_gate_unref(gate);
	}
	gpuhandle_frame_sender_stats stats;
	gpuhandle_frame_sender_get_stats(sender, &stats);
	ck_assert_uint_eq(stats.frames_sent, FRAMES);
	ck_assert_uint_eq(stats.releases, FRAMES);
	gpuhandle_frame_transport_file_stats files;
	memset(&files, 0xff, sizeof files);
	gpuhandle_frame_sender_get_file_stats(sender, &files);
	ck_assert_uint_eq(files.files_remembered, keep_files ? 1 : 0);
	/* Frame 0 may go before the consumer's Features is read; every later one waits for the
	 * release of the one before, which the consumer sent after its Features. */
	ck_assert_uint_ge(files.frames_over_kept_files, keep_files ? FRAMES - 1 : 0);
	ck_assert_uint_le(files.frames_over_kept_files, keep_files ? FRAMES : 0);
	ck_assert_uint_eq(files.files_held, 0);
	uint32_t told = 0;
	ck_assert_int_eq(gpuhandle_frame_sender_end_stream(sender, &told, NULL), GPUHANDLE_OK);
	ck_assert_uint_eq(told, 1);
	gpuhandle_frame_sender_free(sender); /* says bye: the consumer sees the end */
	int status = 0;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "consumer exit %d",
		      WEXITSTATUS(status));
	munmap(bytes, NV12_SIZE);
	gpuhandle_frame_unref(frame);
	gpuhandle_resource_unref(resource);
	ck_assert_int_eq(open_fd_count(), fds_before); /* the memfd went with the resource */
}
END_TEST

START_TEST(bad_arguments_are_named)
{
	gpuhandle_frame_sender *sender = SENTINEL;
	gpuhandle_error *error = NULL;
	ck_assert_failed(gpuhandle_frame_sender_new(NULL, &sender, &error), sender, error,
			 GPUHANDLE_ERROR_NULL_HANDLE, "options");
	gpuhandle_frame_sender_options options;
	memset(&options, 0, sizeof options);
	sender = SENTINEL;
	ck_assert_failed(gpuhandle_frame_sender_new(&options, &sender, &error), sender, error,
			 GPUHANDLE_ERROR_NULL_HANDLE, "options->socket_path");
	options.socket_path = "/tmp";
	sender = SENTINEL;
	ck_assert_failed(gpuhandle_frame_sender_new(&options, &sender, &error), sender, error,
			 GPUHANDLE_ERROR_INVALID_ARGUMENT, "socketPath");
	gpuhandle_frame_receiver_options ro;
	memset(&ro, 0, sizeof ro);
	ro.socket_path = "/tmp/gpuhandle-capi-nobody-listens.sock";
	ro.connect_timeout_ns = 50000000;
	gpuhandle_frame_receiver *receiver = SENTINEL;
	ck_assert_failed(gpuhandle_frame_receiver_connect(&ro, &receiver, &error), receiver, error,
			 GPUHANDLE_ERROR_TIMEOUT, "socketPath");
	receiver = SENTINEL;
	ck_assert_failed(gpuhandle_frame_receiver_connect_with_file_cache(&ro, 33, &receiver,
									  &error),
			 receiver, error, GPUHANDLE_ERROR_OUT_OF_RANGE, "cachedFiles");
	receiver = SENTINEL;
	ck_assert_failed(gpuhandle_frame_receiver_connect_with_file_cache(NULL, 0, &receiver,
									  &error),
			 receiver, error, GPUHANDLE_ERROR_NULL_HANDLE, "options");
	uint32_t delivered = 7;
	ck_assert_int_eq(gpuhandle_frame_sender_send(NULL, NULL, &delivered, NULL),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_uint_eq(delivered, 0);
	uint32_t told = 7;
	ck_assert_int_eq(gpuhandle_frame_sender_end_stream(NULL, &told, &error),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_uint_eq(told, 0);
	ck_assert_str_eq(gpuhandle_error_get_field(error), "sender");
	gpuhandle_error_unref(error);
	error = NULL;
	ck_assert_uint_eq(gpuhandle_frame_receiver_get_caps(NULL, NULL, 0), 0);
	ck_assert_uint_eq(gpuhandle_frame_receiver_get_attachment(NULL, NULL, 0), 0);
	ck_assert_int_eq(gpuhandle_frame_sender_send_with_attachment(NULL, NULL, NULL, 4,
								     &delivered, &error),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_str_eq(gpuhandle_error_get_field(error), "attachment");
	gpuhandle_error_unref(error);
	error = NULL;
	gpuhandle_frame_sender_stats stats;
	memset(&stats, 0xff, sizeof stats);
	gpuhandle_frame_sender_get_stats(NULL, &stats);
	ck_assert_uint_eq(stats.frames_sent, 0);
	gpuhandle_frame_transport_file_stats files;
	memset(&files, 0xff, sizeof files);
	gpuhandle_frame_sender_get_file_stats(NULL, &files);
	ck_assert_uint_eq(files.files_remembered, 0);
	ck_assert_uint_eq(files.files_held, 0);
	memset(&files, 0xff, sizeof files);
	gpuhandle_frame_receiver_get_file_stats(NULL, &files);
	ck_assert_uint_eq(files.frames_over_kept_files, 0);
	gpuhandle_frame_sender_get_file_stats(NULL, NULL);
	gpuhandle_frame_receiver_get_file_stats(NULL, NULL);
	gpuhandle_frame_sender_free(NULL);
	gpuhandle_frame_receiver_free(NULL);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("transport");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, frames_cross_from_a_c_producer_to_a_c_consumer, 0, 2);
	tcase_add_test(tc, bad_arguments_are_named);
	return run_one_case("capi_transport", tc);
}

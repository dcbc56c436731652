// opencl_sync (placeholder until written)
#pragma once

/*
 * The engine moves flat runs of bytes. A (count, datatype) that is one contiguous run is handed
 * over in place; any other is packed into a flat buffer first (or unpacked from one after) with
 * Open MPI's convertor, in the packed representation every rank of a homogeneous job shares, so
 * send and receive types with different layouts but matching signatures meet byte for byte.
 */
#include "coll_nicoll.h"

#include <string.h>

#include "opal/datatype/opal_convertor.h"

NICOLL_HOT_PATH
bool nicoll_contiguous(const struct ompi_datatype_t *type, size_t count)
{
    /* Contiguous for two elements means contiguous for any number: the extent equals the size. */
    return ompi_datatype_is_contiguous_memory_layout(type, count > 1 ? 2 : (int32_t) count);
}

NICOLL_HOT_PATH
void *nicoll_data_start(const void *buf, const struct ompi_datatype_t *type)
{
    return (char *) buf + type->super.true_lb;
}

/* Packs (count, type) at buf into the flat buffer, or unpacks the flat buffer into it. */
static int convert(bool pack, void *buf, size_t count, const struct ompi_datatype_t *type,
                   void *flat, size_t bytes)
{
    if (nicoll_contiguous(type, count)) { /* no convertor to set up for one run of bytes */
        void *data = nicoll_data_start(buf, type);
        memcpy(pack ? flat : data, pack ? data : flat, bytes);
        return OMPI_SUCCESS;
    }
    opal_convertor_t convertor;
    struct iovec iov = {.iov_base = flat, .iov_len = bytes};
    uint32_t iov_count = 1;
    size_t max_data = bytes;

    OBJ_CONSTRUCT(&convertor, opal_convertor_t);
    int rc = pack ? opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor,
                                                             &type->super, count, buf, 0,
                                                             &convertor)
                  : opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor,
                                                             &type->super, count, buf, 0,
                                                             &convertor);
    if (OPAL_SUCCESS == rc) {
        int32_t done = pack ? opal_convertor_pack(&convertor, &iov, &iov_count, &max_data)
                            : opal_convertor_unpack(&convertor, &iov, &iov_count, &max_data);
        rc = done < 0 || max_data != bytes ? OMPI_ERROR : OMPI_SUCCESS;
    }
    OBJ_DESTRUCT(&convertor);
    return rc;
}

int nicoll_pack(const void *buf, size_t count, const struct ompi_datatype_t *type, void *out,
                size_t bytes)
{
    return convert(true, (void *) buf, count, type, out, bytes);
}

int nicoll_unpack(const void *in, size_t bytes, void *buf, size_t count,
                  const struct ompi_datatype_t *type)
{
    return convert(false, buf, count, type, (void *) in, bytes);
}

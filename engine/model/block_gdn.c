/* The GDN mixer: the Gated DeltaNet layer of engine/gdn/gdn_layer.h, with its
 * recurrent state and conv history carried between calls in decode runs. */
#include "model/tf_internal.h"

static int gdn_forward(tf_run *r, int l, int B, int T, int pos0, const tf_hooks *h, gf_buf out, gf_buf add) {
    (void)pos0;
    const transformer *tf = r->tf;
    const layer_acts *a = &r->la[l];
    gdn_acts ga = a->gdn;
    ga.B = B, ga.T = T;
    gdn_layer_forward(tf->be, &tf->gcfg, &tf->w.layers[l].gdn, &ga, a->xn1, out, add, r->o.decode ? &a->gst : NULL);
    return h && h->on_gdn ? h->on_gdn(h->ud, l, ga.g, ga.beta, B * T) : 0;
}

static void gdn_backward(tf_run *r, int l, gf_buf dout, gf_buf dxn) {
    transformer *tf = r->tf;
    const layer_acts *a = &r->la[l];
    gdn_acts ga = a->gdn;
    ga.B = r->B, ga.T = r->T;
    gdn_weights none;
    gdn_weights_bind(&none, &tf->gcfg, gf_none());
    const bool want = tf->train[PGROUP_GDN];
    const gdn_weights *g = want ? &tf->g.layers[l].gdn : &none;
    const bool add_dW = !(want && tf_grads_take_fresh(tf, l, TF_FRESH_MIXER));
    gdn_layer_backward(tf->be, &tf->gcfg, &tf->w.layers[l].gdn, g, &ga, &r->gs, a->xn1, dout, dxn, false, add_dW);
}

const mixer_ops gdn_mixer = {gdn_forward, gdn_backward};

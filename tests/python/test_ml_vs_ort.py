"""ai.onnx.ml ops on skl2onnx conversions of real scikit-learn models, onnxmini against
onnxruntime (the oracle for these ops) on the same inputs.

Every model is fitted on seeded data, converted by skl2onnx (its default opsets), and
where the op has other attribute forms, rewritten to them: TreeEnsemble* with the
ai.onnx.ml 3 *_as_tensor double attributes, and single-target regressors as the
ai.onnx.ml 5 TreeEnsemble. Labels must be equal; scores agree within the float32
rounding bounds derived below (per model, from its size and magnitudes).
"""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

pytest.importorskip("sklearn")
pytest.importorskip("skl2onnx")
import onnxmini  # noqa: E402
from skl2onnx import to_onnx  # noqa: E402
from skl2onnx.common.data_types import (  # noqa: E402
    DictionaryType, FloatTensorType, Int64TensorType, StringTensorType)
from sklearn.datasets import make_classification, make_regression  # noqa: E402

EPS = float(np.finfo(np.float32).eps)


# ---------------------------------------------------------------- running and comparing

def run_both(model, feeds):
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    ours = onnxmini.InferenceSession(data).run(None, feeds)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, ref


def assert_outputs_match(ours, ref, atol):
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"output {i}: shape {a.shape} vs onnxruntime {b.shape}"
        if b.dtype.kind in "iuOUSb":
            np.testing.assert_array_equal(a, b, err_msg=f"output {i} (labels) differs from onnxruntime")
        else:
            np.testing.assert_allclose(a, b, rtol=0, atol=atol, err_msg=f"output {i} differs from onnxruntime")


def ml_node(model, op):
    nodes = [n for n in model.graph.node if n.op_type == op and n.domain == "ai.onnx.ml"]
    assert nodes, f"skl2onnx wrote no {op} node (ops: {[n.op_type for n in model.graph.node]})"
    return nodes[0]


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def set_ml_opset(model, version):
    for o in model.opset_import:
        if o.domain == "ai.onnx.ml":
            o.version = version
            return
    model.opset_import.append(helper.make_opsetid("ai.onnx.ml", version))


# ---------------------------------------------------------------- tree tolerances and rewrites

def tree_atol(node, prefix):
    """Bound on the float32 rounding of a tree ensemble's scores: every partial sum is
    at most S = sum over trees of the tree's largest |leaf weight| (+ |base values|), and
    each of the T additions (trees + base) rounds by at most eps/2 * S in either
    implementation, so |ours - ort| <= T * eps * S; post-transforms (softmax, logistic)
    have derivative <= 1 and do not grow it. Plus one rounding of the output."""
    trees = np.asarray(attr(node, f"{prefix}_treeids"))
    weights = np.abs(np.asarray(attr(node, f"{prefix}_weights")))
    s = sum(weights[trees == t].max() for t in np.unique(trees))
    base = attr(node, "base_values")
    s += float(np.abs(base).sum()) if base is not None else 0.0
    n_add = len(np.unique(trees)) + 1
    return n_add * EPS * s + EPS * max(1.0, s)


def as_tensor_variant(model):
    """The ai.onnx.ml 3 form: float lists -> *_as_tensor double tensors, with a double
    input X (onnxruntime takes double thresholds only with a double input)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    set_ml_opset(m, 3)
    m.graph.input[0].type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    for node in m.graph.node:
        if node.op_type not in ("TreeEnsembleClassifier", "TreeEnsembleRegressor"):
            continue
        keep = []
        for a in node.attribute:
            if a.name in ("nodes_values", "target_weights", "class_weights", "base_values"):
                keep.append(helper.make_attribute(
                    a.name + "_as_tensor",
                    numpy_helper.from_array(np.asarray(a.floats, dtype=np.float64), a.name + "_as_tensor")))
            else:
                keep.append(a)
        del node.attribute[:]
        node.attribute.extend(keep)
    return m


def tree_ensemble_v5_variant(model):
    """A single-target TreeEnsembleRegressor rewritten as ai.onnx.ml 5 TreeEnsemble."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    node = ml_node(m, "TreeEnsembleRegressor")
    assert attr(node, "n_targets", 1) == 1
    tree_ids, node_ids = attr(node, "nodes_treeids"), attr(node, "nodes_nodeids")
    modes = [s.decode() for s in attr(node, "nodes_modes")]
    index = {}  # (tree, node) -> branch index or ('leaf', leaf index)
    branches, leaves = [], []
    for i, (t, n) in enumerate(zip(tree_ids, node_ids)):
        if modes[i] == "LEAF":
            index[(t, n)] = ("leaf", len(leaves))
            leaves.append((t, n))
        else:
            index[(t, n)] = ("node", len(branches))
            branches.append(i)
    weight = {(t, n): 0.0 for t, n in leaves}
    for t, n, w in zip(attr(node, "target_treeids"), attr(node, "target_nodeids"), attr(node, "target_weights")):
        weight[(t, n)] += w
    codes = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5}
    roots, seen = [], set()
    for i, t in enumerate(tree_ids):
        if t not in seen:
            seen.add(t)
            assert modes[i] != "LEAF", "a one-leaf tree cannot be a TreeEnsemble root"
            roots.append(index[(t, node_ids[i])][1])
    values = attr(node, "nodes_values")
    missing = attr(node, "nodes_missing_value_tracks_true") or [0] * len(modes)
    feats, splits, mode_codes, tid, tleaf, fid, fleaf, miss = [], [], [], [], [], [], [], []
    for i in branches:
        t = tree_ids[i]
        tk, tv = index[(t, attr(node, "nodes_truenodeids")[i])]
        fk, fv = index[(t, attr(node, "nodes_falsenodeids")[i])]
        feats.append(attr(node, "nodes_featureids")[i])
        splits.append(values[i])
        mode_codes.append(codes[modes[i]])
        tid.append(tv), tleaf.append(int(tk == "leaf")), fid.append(fv), fleaf.append(int(fk == "leaf"))
        miss.append(missing[i])
    base = attr(node, "base_values")
    post = {"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}[
        (attr(node, "post_transform") or b"NONE").decode()]
    agg = {"AVERAGE": 0, "SUM": 1, "MIN": 2, "MAX": 3}[(attr(node, "aggregate_function") or b"SUM").decode()]
    new = helper.make_node(
        "TreeEnsemble", list(node.input), list(node.output), domain="ai.onnx.ml",
        tree_roots=roots, nodes_featureids=feats,
        nodes_splits=numpy_helper.from_array(np.asarray(splits, np.float32)),
        nodes_modes=numpy_helper.from_array(np.asarray(mode_codes, np.uint8)),
        nodes_truenodeids=tid, nodes_trueleafs=tleaf, nodes_falsenodeids=fid, nodes_falseleafs=fleaf,
        nodes_missing_value_tracks_true=[int(v) for v in miss],
        leaf_targetids=[0] * len(leaves),
        leaf_weights=numpy_helper.from_array(np.asarray([weight[k] for k in leaves], np.float32)),
        n_targets=1, aggregate_function=agg, post_transform=post)
    nodes = [new if n is node else n for n in m.graph.node]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    set_ml_opset(m, 5)
    # TreeEnsemble has no base values: the caller subtracts the returned one from its
    # expectation (onnxruntime runs the same rewritten model, so it needs no adjustment).
    return m, (base[0] if base else 0.0)


# ---------------------------------------------------------------- data

def classification(n_classes, n=240, seed=0):
    x, y = make_classification(n, 6, n_informative=4, n_redundant=1, n_classes=n_classes, random_state=seed)
    return x.astype(np.float32), y


def regression(n_targets=1, n=240, seed=0):
    x, y = make_regression(n, 6, n_informative=4, n_targets=n_targets, noise=0.5, random_state=seed)
    return x.astype(np.float32), y


def convert(est, x, target_opset=None, **options):
    opts = {id(est): options} if options else None
    return to_onnx(est, x[:1], options=opts, target_opset=target_opset)


# skl2onnx's default opsets, and ai.onnx.ml 3 asked for explicitly (skl2onnx 1.20 still
# writes TreeEnsemble*, not the ai.onnx.ml 5 TreeEnsemble, when asked for 5).
ML3 = {"": 17, "ai.onnx.ml": 3}


# ---------------------------------------------------------------- tree ensembles

def _tree_classifiers():
    from sklearn.ensemble import ExtraTreesClassifier, GradientBoostingClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier
    return {
        "random_forest_multiclass": (RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0), 3),
        "random_forest_binary": (RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0), 2),
        "gradient_boosting_binary": (GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0), 2),
        "gradient_boosting_multiclass": (GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0), 4),
        "extra_trees_multiclass": (ExtraTreesClassifier(n_estimators=15, max_depth=8, random_state=0), 3),
        "decision_tree_binary": (DecisionTreeClassifier(max_depth=5, random_state=0), 2),
    }


@pytest.mark.parametrize("variant", ["default", "target_opset_ml3", "as_tensor"])
@pytest.mark.parametrize("name", list(_tree_classifiers()))
def test_tree_classifier(name, variant):
    est, classes = _tree_classifiers()[name]
    x, y = classification(classes)
    est.fit(x, y)
    model = convert(est, x, target_opset=ML3 if variant == "target_opset_ml3" else None, zipmap=False)
    atol = tree_atol(ml_node(model, "TreeEnsembleClassifier"), "class")
    feeds = {"X": x}
    if variant == "as_tensor":
        model = as_tensor_variant(model)
        feeds = {"X": x.astype(np.float64)}
    ours, ref = run_both(model, feeds)
    assert_outputs_match(ours, ref, atol)
    np.testing.assert_array_equal(ours[0], est.predict(x))


def test_tree_classifier_string_labels_and_zipmap():
    from sklearn.ensemble import RandomForestClassifier
    x, y = classification(3)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    est = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(x, labels)
    model = convert(est, x, zipmap=False)
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, tree_atol(ml_node(model, "TreeEnsembleClassifier"), "class"))
    # With ZipMap (skl2onnx's default): one {label: probability} dict per row.
    ours, ref = run_both(convert(est, x), {"X": x[:20]})
    np.testing.assert_array_equal(ours[0], ref[0])
    assert [sorted(d) for d in ours[1]] == [sorted(d) for d in ref[1]]
    for a, b in zip(ours[1], ref[1]):
        np.testing.assert_allclose([a[k] for k in sorted(a)], [b[k] for k in sorted(b)], atol=1e-6)


def _tree_regressors():
    from sklearn.ensemble import ExtraTreesRegressor, GradientBoostingRegressor, RandomForestRegressor
    return {
        "random_forest": (RandomForestRegressor(n_estimators=20, max_depth=6, random_state=0), 1),
        "random_forest_multi_target": (RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0), 3),
        "gradient_boosting": (GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0), 1),
        "extra_trees": (ExtraTreesRegressor(n_estimators=10, max_depth=6, random_state=0), 1),
    }


@pytest.mark.parametrize("variant", ["default", "target_opset_ml3", "as_tensor", "tree_ensemble_v5"])
@pytest.mark.parametrize("name", list(_tree_regressors()))
def test_tree_regressor(name, variant):
    est, targets = _tree_regressors()[name]
    if variant == "tree_ensemble_v5" and targets > 1:
        pytest.skip("the v5 rewrite here handles one target")
    x, y = regression(targets)
    est.fit(x, y)
    model = convert(est, x, target_opset=ML3 if variant == "target_opset_ml3" else None)
    atol = tree_atol(ml_node(model, "TreeEnsembleRegressor"), "target")
    base = 0.0
    feeds = {"X": x}
    if variant == "as_tensor":
        model = as_tensor_variant(model)
        feeds = {"X": x.astype(np.float64)}
    elif variant == "tree_ensemble_v5":
        model, base = tree_ensemble_v5_variant(model)
    ours, ref = run_both(model, feeds)
    assert_outputs_match(ours, ref, atol)
    # Our scores against scikit-learn itself (float64 sums of float64 leaves): the ONNX
    # leaves are those rounded to float32 (eps/2 * S in all), inside the same bound. The data
    # are float32, so the float32 thresholds route every row as scikit-learn does.
    expected = est.predict(x).reshape(len(x), -1) - base
    np.testing.assert_allclose(ours[0], expected, rtol=0, atol=atol)


def test_tree_classifier_missing_values_follow_the_model():
    """HistGradientBoosting learns where NaNs go; skl2onnx encodes it in
    nodes_missing_value_tracks_true."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    x, y = classification(2)
    x[::7, 1] = np.nan
    est = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(x, y)
    try:
        model = convert(est, x, zipmap=False)
    except Exception as e:  # skl2onnx 1.20 fails on this model with numpy 2 (uint32 node ids)
        pytest.skip(f"skl2onnx cannot convert HistGradientBoostingClassifier here: {str(e)[:80]}")
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, tree_atol(ml_node(model, "TreeEnsembleClassifier"), "class"))


def _member_model(x_type=onnx.TensorProto.FLOAT):
    """Two trees, one with a BRANCH_MEMBER split, NaN routing, and two targets."""
    t = helper.tensor_dtype_to_np_dtype(x_type)
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml",
        tree_roots=[0, 3], nodes_featureids=[0, 1, 2, 1, 0],
        nodes_splits=numpy_helper.from_array(np.array([0.5, 0.0, 2.0, 1.5, -1.0], t)),
        nodes_modes=numpy_helper.from_array(np.array([6, 0, 1, 3, 5], np.uint8)),
        nodes_truenodeids=[1, 0, 2, 4, 5], nodes_trueleafs=[0, 1, 1, 0, 1],
        nodes_falsenodeids=[2, 1, 3, 3, 6], nodes_falseleafs=[0, 1, 1, 1, 1],
        nodes_missing_value_tracks_true=[1, 0, 1, 0, 0],
        membership_values=numpy_helper.from_array(np.array([1.0, 3.0, 5.0, np.nan], t)),
        leaf_targetids=[0, 1, 0, 1, 0, 1, 0], n_targets=2,
        leaf_weights=numpy_helper.from_array(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], t)),
        aggregate_function=1, post_transform=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", x_type, [None, 3])],
                              [helper.make_tensor_value_info("Y", x_type, [None, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])


def test_tree_ensemble_v5_member_and_nan_routing():
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 7, size=(200, 3)).astype(np.float32)
    x[::5, 0] = np.nan
    x[::9, 2] = np.nan
    ours, ref = run_both(_member_model(), {"X": x})
    assert_outputs_match(ours, ref, 0.0)  # integer leaf weights: sums are exact
    ours, ref = run_both(_member_model(onnx.TensorProto.DOUBLE), {"X": x.astype(np.float64)})
    assert_outputs_match(ours, ref, 0.0)
    # float16: onnxruntime 1.32 rejects this model (its shape inference wants float
    # splits), so ours is checked against onnxruntime's float32 result; inputs, splits
    # and weights are small integers, exact in float16.
    ref32 = ort.InferenceSession(_member_model().SerializeToString()).run(None, {"X": x})[0]
    ours16 = onnxmini.InferenceSession(_member_model(onnx.TensorProto.FLOAT16).SerializeToString()).run(
        None, {"X": x.astype(np.float16)})[0]
    assert ours16.dtype == np.float16
    np.testing.assert_array_equal(ours16.astype(np.float32), ref32)


# ---------------------------------------------------------------- support vector machines

def svm_atol(est, x, probability):
    """Decision values: sum over V support vectors of coef * K, plus rho, each term
    rounded in float32: |error| <= (V + F) * eps * S, S = max over rows of
    sum |coef| * |K| (computed here in float64). With probabilities, the coupling
    iteration stops once its error is below 0.005 / classes, and rounding-level input
    differences can make the two implementations stop one sweep apart: the bound is
    then that stopping tolerance."""
    from sklearn.metrics.pairwise import pairwise_kernels
    params = {"linear": {}, "rbf": {"gamma": est._gamma}, "poly": {"gamma": est._gamma, "coef0": est.coef0,
              "degree": est.degree}, "sigmoid": {"gamma": est._gamma, "coef0": est.coef0}}[est.kernel]
    k = pairwise_kernels(x.astype(np.float64), est.support_vectors_, metric=est.kernel, **params)
    s = (np.abs(k) @ np.abs(est.dual_coef_).T).max() + np.abs(est.intercept_).max()
    bound = (k.shape[1] + x.shape[1]) * EPS * max(1.0, s)
    if probability:
        bound = max(bound, 0.005 / max(2, len(getattr(est, "classes_", [0, 1]))))
    return bound


@pytest.mark.parametrize("opset", ["default", "target_opset_ml3"])
@pytest.mark.parametrize("probability", [False, True])
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
@pytest.mark.parametrize("classes", [2, 3])
def test_svc(kernel, probability, classes, opset):
    from sklearn.svm import SVC
    x, y = classification(classes, n=150)
    est = SVC(kernel=kernel, probability=probability, random_state=0).fit(x, y)
    model = convert(est, x, target_opset=ML3 if opset == "target_opset_ml3" else None, zipmap=False)
    ml_node(model, "SVMClassifier")
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, svm_atol(est, x, probability))


def test_svc_string_labels():
    from sklearn.svm import SVC
    x, y = classification(3, n=150)
    est = SVC(kernel="rbf", probability=True, random_state=0).fit(x, np.array(["a", "b", "c"])[y])
    model = convert(est, x, zipmap=False)
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, svm_atol(est, x, True))


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_svr(kernel):
    from sklearn.svm import SVR
    x, y = regression(n=150)
    est = SVR(kernel=kernel, C=10.0).fit(x, y / 50)
    model = convert(est, x)
    ml_node(model, "SVMRegressor")
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, svm_atol(est, x, False))


def test_one_class_svm():
    from sklearn.svm import OneClassSVM
    x, _ = classification(2, n=150)
    est = OneClassSVM(nu=0.2, gamma="scale").fit(x)
    model = convert(est, x)
    ml_node(model, "SVMRegressor")
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, svm_atol(est, x, False))
    np.testing.assert_array_equal(ours[0].ravel(), est.predict(x))


@pytest.mark.parametrize("classes", [2, 3])
def test_linear_svc(classes):
    from sklearn.svm import LinearSVC
    x, y = classification(classes)
    est = LinearSVC(random_state=0).fit(x, y)
    model = convert(est, x)
    ours, ref = run_both(model, {"X": x})
    # One dot product of F terms plus the intercept per score.
    s = (np.abs(x) @ np.abs(est.coef_).T).max() + np.abs(est.intercept_).max()
    assert_outputs_match(ours, ref, (x.shape[1] + 1) * EPS * max(1.0, s))
    np.testing.assert_array_equal(ours[0], est.predict(x))


# ---------------------------------------------------------------- pipelines with encoders

def _mixed_frame(n=200, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 2)).astype(np.float32)
    color = rng.choice(["red", "green", "blue"], size=n)
    size = rng.choice([1, 2, 3, 4], size=n).astype(np.int64)
    y = ((np.nan_to_num(num[:, 0]) + (color == "red") + 0.3 * size) > 1.0).astype(np.int64)
    num[rng.random((n, 2)) < 0.15] = np.nan
    frame = pd.DataFrame({"a": num[:, 0], "b": num[:, 1], "color": color, "size": size})
    feeds = {"a": num[:, :1], "b": num[:, 1:], "color": color.astype(object).reshape(-1, 1),
             "size": size.reshape(-1, 1)}
    return frame, y, feeds


def _mixed_types():
    return [("a", FloatTensorType([None, 1])), ("b", FloatTensorType([None, 1])),
            ("color", StringTensorType([None, 1])), ("size", Int64TensorType([None, 1]))]


@pytest.mark.parametrize("head", ["logistic_regression", "random_forest"])
def test_column_transformer_pipeline(head):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    frame, y, feeds = _mixed_frame()
    pre = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), ["a", "b"]),
        ("cat", OneHotEncoder(handle_unknown="ignore"), ["color", "size"])])
    clf = LogisticRegression() if head == "logistic_regression" else RandomForestClassifier(
        n_estimators=10, max_depth=5, random_state=0)
    pipe = make_pipeline(pre, clf).fit(frame, y)
    model = to_onnx(pipe, initial_types=_mixed_types(), options={id(clf): {"zipmap": False}})
    ops = {n.op_type for n in model.graph.node}
    assert {"Imputer", "OneHotEncoder", "Scaler"} <= ops, ops
    ours, ref = run_both(model, feeds)
    assert_outputs_match(ours, ref, 1e-5 if head == "logistic_regression" else
                         tree_atol(ml_node(model, "TreeEnsembleClassifier"), "class"))
    np.testing.assert_array_equal(ours[0], pipe.predict(frame))


def test_ordinal_encoded_strings_into_a_forest():
    """OrdinalEncoder on string columns becomes LabelEncoder nodes."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder
    frame, y, feeds = _mixed_frame(seed=3)
    pre = ColumnTransformer([("cat", OrdinalEncoder(), ["color"]), ("num", "passthrough", ["size"])])
    clf = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)
    pipe = make_pipeline(pre, clf).fit(frame, y)
    model = to_onnx(pipe, initial_types=[("color", StringTensorType([None, 1])), ("size", Int64TensorType([None, 1]))],
                    options={id(clf): {"zipmap": False}})
    ml_node(model, "LabelEncoder")
    feeds = {"color": feeds["color"], "size": feeds["size"]}
    ours, ref = run_both(model, feeds)
    assert_outputs_match(ours, ref, tree_atol(ml_node(model, "TreeEnsembleClassifier"), "class"))


def test_label_encoder_string_labels():
    from sklearn.preprocessing import LabelEncoder
    enc = LabelEncoder().fit(["cat", "dog", "mouse", "cat"])
    model = to_onnx(enc, initial_types=[("X", StringTensorType([None]))])
    x = np.array(["dog", "cat", "mouse", "zebra", "dog"], dtype=object)
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, 0.0)
    np.testing.assert_array_equal(ours[0][:3], enc.transform(x[:3]))


def test_dict_vectorizer_pipeline():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.pipeline import make_pipeline
    rng = np.random.default_rng(0)
    dicts = [{k: float(rng.normal()) for k in rng.choice(["u", "v", "w", "z"], size=rng.integers(1, 4),
                                                          replace=False)} for _ in range(120)]
    y = [int(d.get("u", 0) + d.get("w", 0) > 0) for d in dicts]
    clf = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)
    pipe = make_pipeline(DictVectorizer(sparse=False), clf).fit(dicts, y)
    model = to_onnx(pipe, initial_types=[("X", DictionaryType(StringTensorType([1]), FloatTensorType([1])))],
                    options={id(clf): {"zipmap": False}})
    ml_node(model, "DictVectorizer")
    atol = tree_atol(ml_node(model, "TreeEnsembleClassifier"), "class")
    for d in dicts[:25] + [{"u": 1.0, "unknown": 3.0}]:
        ours, ref = run_both(model, {"X": d})
        assert_outputs_match(ours, ref, atol)


# ---------------------------------------------------------------- hand-written nodes

def _single_node_model(node, inputs, outputs, ml_opset=3):
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("ai.onnx.ml", ml_opset)])


def test_label_encoder_v4_double_keys_with_nan():
    node = helper.make_node(
        "LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml",
        keys_tensor=numpy_helper.from_array(np.array([0.5, 1.25, np.nan, -3.0], np.float64)),
        values_tensor=numpy_helper.from_array(np.array([10, 20, 30, 40], np.int64)),
        default_tensor=numpy_helper.from_array(np.array([-7], np.int64)))
    model = _single_node_model(node, [helper.make_tensor_value_info("X", onnx.TensorProto.DOUBLE, [None])],
                               [helper.make_tensor_value_info("Y", onnx.TensorProto.INT64, [None])], 4)
    x = np.array([0.5, np.nan, 2.0, -3.0, 1.25], np.float64)
    ours, ref = run_both(model, {"X": x})
    assert_outputs_match(ours, ref, 0.0)


def test_category_mapper_both_directions():
    node = helper.make_node("CategoryMapper", ["X"], ["Y"], domain="ai.onnx.ml", cats_int64s=[3, 1, 7],
                            cats_strings=["c", "a", "g"], default_int64=-5, default_string="?")
    for x_type, y_type, x in [(onnx.TensorProto.STRING, onnx.TensorProto.INT64,
                               np.array([["a", "g"], ["zz", "c"]], dtype=object)),
                              (onnx.TensorProto.INT64, onnx.TensorProto.STRING, np.array([7, 2, 3, 1], np.int64))]:
        model = _single_node_model(node, [helper.make_tensor_value_info("X", x_type, None)],
                                   [helper.make_tensor_value_info("Y", y_type, None)], 1)
        ours, ref = run_both(model, {"X": x})
        assert_outputs_match(ours, ref, 0.0)


def test_imputer_per_feature_and_feature_vectorizer():
    imp = helper.make_node("Imputer", ["A"], ["A2"], domain="ai.onnx.ml", imputed_value_floats=[1.5, -2.0, 9.0],
                           replaced_value_float=float("nan"))
    fv = helper.make_node("FeatureVectorizer", ["A2", "B"], ["Y"], domain="ai.onnx.ml", inputdimensions=[2, 3])
    graph = helper.make_graph([imp, fv], "g", [helper.make_tensor_value_info("A", onnx.TensorProto.FLOAT, [None, 3]),
                                               helper.make_tensor_value_info("B", onnx.TensorProto.FLOAT, [None, 2])],
                              [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [None, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 1)])
    a = np.array([[np.nan, 1, 2], [3, np.nan, np.nan], [4, 5, 6]], np.float32)
    b = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    ours, ref = run_both(model, {"A": a, "B": b})
    assert_outputs_match(ours, ref, 0.0)


def test_dict_vectorizer_int64_keys_and_a_non_dict_feed():
    node = helper.make_node("DictVectorizer", ["X"], ["Y"], domain="ai.onnx.ml", int64_vocabulary=[5, 1, 9])
    map_type = helper.make_map_type_proto(onnx.TensorProto.INT64,
                                          helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None))
    model = _single_node_model(node, [helper.make_value_info("X", map_type)],
                               [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)], 1)
    for d in [{9: 1.5, 5: -2.0}, {7: 3.0}, {1: 0.25, 5: 4.0, 9: 8.0}]:
        ours, ref = run_both(model, {"X": d})
        assert_outputs_match(ours, ref, 0.0)
    with pytest.raises(onnxmini.InvalidArgument, match="expected a dict for map"):
        onnxmini.InferenceSession(model.SerializeToString()).run(None, {"X": [1.0, 2.0]})
